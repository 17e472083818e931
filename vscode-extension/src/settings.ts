/**
 * The sidecar's settings tree (docs/configuration.md) read from the `dsh.*` configuration.
 *
 * Only the keys of docs/configuration.md go to the server: the `dsh` section also holds client-only keys (pythonPath,
 * model.*), and the server refuses unknown keys rather than ignoring them.
 */

/** The subset of vscode.WorkspaceConfiguration this module needs (keeps it testable). */
export interface ConfigReader {
  get<T>(key: string): T | undefined;
  inspect<T>(key: string): { defaultValue?: T; globalValue?: T } | undefined;
}

/**
 * Settings that widen what the sidecar reads or where it writes (docs/configuration.md, "Settings a
 * repository cannot set"). They are `machine`-scoped in package.json, and read here from the user's
 * own settings only (`inspect().globalValue`, else the default), never from `.vscode/settings.json`
 * or a workspace file, in trusted and Restricted Mode alike: a cloned repository must not be able to
 * point `allowedSymlinkTargets` at `~` beside `AGENTS.md -> ~/.ssh/id_rsa`.
 */
export const USER_ONLY_SERVER_SETTINGS: ReadonlySet<string> = new Set([
  'instructions.dshHome',
  'instructions.projectRootMarkers',
  'instructions.instructionFileCandidates',
  'instructions.localInstructionFileCandidates',
  'instructions.allowedSymlinkTargets',
  'instructions.imports',
  'instructions.userGlobalFiles',
  'store.path',
]);

function userValue(config: ConfigReader, key: string): unknown {
  const seen = config.inspect<unknown>(key);
  return seen === undefined ? undefined : (seen.globalValue ?? seen.defaultValue);
}

/** Section → keys of docs/configuration.md, in its order. */
export const SERVER_SETTING_KEYS = {
  instructions: [
    'enabled',
    'maxBytes',
    'maxSourceBytes',
    'dshHome',
    'projectRootMarkers',
    'instructionFileCandidates',
    'localInstructionFileCandidates',
    'respectGitignore',
    'exclude',
    'allowedSymlinkTargets',
    'overrideFiles',
    'imports',
    'ruleSets',
    'userGlobalFiles',
  ],
  sessionReference: ['enabled', 'maxReferences', 'candidateLimit', 'maxReferenceBytes'],
  timeContext: ['enabled', 'timeZone', 'refreshIntervalMs'],
  tmuxContext: ['enabled', 'refreshIntervalMs'],
  store: ['path', 'busyTimeoutMs'],
  hover: ['otherFiles'],
} as const;

export type ServerSettings = Record<string, Record<string, unknown>>;

/**
 * Build the settings tree from `dsh.*`. A key the user never set still carries its contributed
 * default, so the server always sees the whole tree the user sees in the settings editor.
 */
export function readServerSettings(config: ConfigReader): ServerSettings {
  const tree: ServerSettings = {};
  for (const [section, keys] of Object.entries(SERVER_SETTING_KEYS)) {
    const out: Record<string, unknown> = {};
    for (const key of keys) {
      const name = `${section}.${key}`;
      const value = USER_ONLY_SERVER_SETTINGS.has(name) ? userValue(config, name) : config.get<unknown>(name);
      // `undefined` only happens for keys the manifest does not contribute (e.g. in tests);
      // leaving them out lets the server keep its own default.
      if (value !== undefined) out[key] = value;
    }
    tree[section] = out;
  }
  return tree;
}

export interface ClientSettings {
  /** dsh.pythonPath when set (not blank); otherwise the interpreter is found automatically. */
  pythonPath: string | undefined;
  /** useBundled: the sidecar bundled with the extension first; fromEnvironment: the interpreter's own first. */
  importStrategy: 'useBundled' | 'fromEnvironment';
  provider: 'auto' | 'openai' | 'vscode-lm';
  baseUrl: string;
  modelName: string;
  maxSteps: number;
  requestTimeoutMs: number;
}

export function readClientSettings(config: ConfigReader): ClientSettings {
  const provider = config.get<string>('model.provider');
  return {
    pythonPath: nonBlank(config.get<string>('pythonPath')),
    importStrategy: config.get<string>('importStrategy') === 'fromEnvironment' ? 'fromEnvironment' : 'useBundled',
    provider: provider === 'openai' || provider === 'vscode-lm' ? provider : 'auto',
    baseUrl: (config.get<string>('model.baseUrl') ?? '').trim(),
    modelName: (config.get<string>('model.name') ?? '').trim(),
    maxSteps: positiveInt(config.get<number>('model.maxSteps'), 25),
    requestTimeoutMs: positiveInt(config.get<number>('model.requestTimeoutSeconds'), 300) * 1000,
  };
}

function nonBlank(value: string | undefined): string | undefined {
  return value !== undefined && value.trim() !== '' ? value.trim() : undefined;
}

function positiveInt(value: number | undefined, fallback: number): number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : fallback;
}

/**
 * The `clientTimeZone` a prompt carries. The sidecar prefers a prompt's zone over
 * `timeContext.timeZone`, so while that setting is set (and the sidecar accepted it) the prompt
 * carries none: the setting comes first, the editor's own zone (Intl) second.
 */
export function promptTimeZone(configured: unknown, refused: boolean, clientZone: string | undefined): string | undefined {
  const set = typeof configured === 'string' && configured.trim() !== '';
  return set && !refused ? undefined : clientZone;
}
