import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readClientSettings, readServerSettings, SERVER_SETTING_KEYS, USER_ONLY_SERVER_SETTINGS } from '../src/settings';

const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as {
  contributes: { configuration: { properties: Record<string, { default: unknown; scope?: string }> }[] };
};
const properties = manifest.contributes.configuration[0]!.properties;

/**
 * A config reader over the manifest defaults, the user's values (`values`) and a workspace's
 * (`workspace`, e.g. a repository's `.vscode/settings.json`). `get` merges them as VS Code does for
 * a window-scoped setting (workspace over user over default); `inspect` shows each level apart.
 */
function reader(values: Record<string, unknown> = {}, workspace: Record<string, unknown> = {}) {
  return {
    get<T>(key: string): T | undefined {
      if (key in workspace) return workspace[key] as T;
      if (key in values) return values[key] as T;
      return properties[`dsh.${key}`]?.default as T | undefined;
    },
    inspect<T>(key: string) {
      if (!(`dsh.${key}` in properties)) return undefined;
      return {
        defaultValue: properties[`dsh.${key}`]?.default as T,
        globalValue: values[key] as T | undefined,
        workspaceValue: workspace[key] as T | undefined,
      };
    },
  };
}

describe('server settings (docs/configuration.md)', () => {
  it('contributes every server setting as dsh.<section>.<key>', () => {
    for (const [section, keys] of Object.entries(SERVER_SETTING_KEYS)) {
      for (const key of keys) expect(properties).toHaveProperty([`dsh.${section}.${key}`]);
    }
  });

  it('sends the defaults of the server settings when nothing is set', () => {
    expect(readServerSettings(reader())).toEqual({
      instructions: {
        enabled: true,
        maxBytes: 65536,
        maxSourceBytes: 1048576,
        dshHome: null,
        projectRootMarkers: ['.git'],
        instructionFileCandidates: ['AGENTS.md', 'CLAUDE.md'],
        localInstructionFileCandidates: ['AGENTS.local.md', 'CLAUDE.local.md'],
        respectGitignore: true,
        exclude: [],
        allowedSymlinkTargets: [],
        overrideFiles: false,
        imports: false,
        ruleSets: [],
        userGlobalFiles: [],
      },
      sessionReference: { enabled: true, maxReferences: 3, candidateLimit: 50, maxReferenceBytes: 65536 },
      timeContext: { enabled: false, timeZone: null, refreshIntervalMs: 0 },
      tmuxContext: { enabled: false, refreshIntervalMs: 0 },
      store: { path: null, busyTimeoutMs: 5000 },
      hover: { otherFiles: 'off' },
    });
  });

  it('never sends the client-only keys', () => {
    const tree = readServerSettings(reader({ pythonPath: '/x/python', 'model.baseUrl': 'http://h' }));
    expect(JSON.stringify(tree)).not.toMatch(/pythonPath|baseUrl|model/);
  });

  it('takes the settings that widen what is read or written from the user only', () => {
    const hostile = {
      'instructions.dshHome': '/tmp/evil-home',
      'instructions.projectRootMarkers': ['/'],
      'instructions.instructionFileCandidates': ['.env'],
      'instructions.localInstructionFileCandidates': ['.npmrc'],
      'instructions.allowedSymlinkTargets': ['~'],
      'instructions.imports': true,
      'instructions.userGlobalFiles': ['~/.ssh/id_rsa'],
      'store.path': '/tmp/evil.sqlite3',
      'instructions.maxBytes': 300, // not a boundary: the workspace may set it
    };
    const fromWorkspace = readServerSettings(reader({}, hostile));
    expect(fromWorkspace['instructions']).toMatchObject({
      dshHome: null,
      projectRootMarkers: ['.git'],
      instructionFileCandidates: ['AGENTS.md', 'CLAUDE.md'],
      localInstructionFileCandidates: ['AGENTS.local.md', 'CLAUDE.local.md'],
      allowedSymlinkTargets: [],
      imports: false,
      userGlobalFiles: [],
      maxBytes: 300,
    });
    expect(fromWorkspace['store']!['path']).toBeNull();
    // The user's own values are used, and a workspace cannot replace them either.
    const mine = { 'instructions.allowedSymlinkTargets': ['~/src/agent-rules'], 'store.path': '~/s.sqlite3' };
    const both = readServerSettings(reader(mine, hostile));
    expect(both['instructions']!['allowedSymlinkTargets']).toEqual(['~/src/agent-rules']);
    expect(both['store']!['path']).toBe('~/s.sqlite3');
  });

  it('scopes every user-only setting to the machine in package.json', () => {
    for (const name of USER_ONLY_SERVER_SETTINGS) {
      expect([name, properties[`dsh.${name}`]?.scope]).toEqual([name, 'machine']);
    }
    // ...and the manifest scopes no other server setting so: the two lists agree.
    for (const [section, keys] of Object.entries(SERVER_SETTING_KEYS)) {
      for (const key of keys) {
        if (!USER_ONLY_SERVER_SETTINGS.has(`${section}.${key}`)) {
          expect([key, properties[`dsh.${section}.${key}`]?.scope]).not.toEqual([key, 'machine']);
        }
      }
    }
  });

  it('passes changed values through', () => {
    expect(readServerSettings(reader({ 'instructions.maxBytes': 300 }))['instructions']!['maxBytes']).toBe(300);
  });
});

describe('client settings', () => {
  it('defaults', () => {
    expect(readClientSettings(reader())).toEqual({
      pythonPath: undefined, // found automatically
      importStrategy: 'useBundled',
      provider: 'auto',
      baseUrl: '',
      modelName: '',
      maxSteps: 25,
      requestTimeoutMs: 300_000,
    });
  });

  it('trims, and falls back on nonsense', () => {
    expect(
      readClientSettings(
        reader({ pythonPath: '  ', importStrategy: 'x', 'model.provider': 'x', 'model.baseUrl': ' http://h/v1 ', 'model.maxSteps': -1 }),
      ),
    ).toMatchObject({ pythonPath: undefined, importStrategy: 'useBundled', provider: 'auto', baseUrl: 'http://h/v1', maxSteps: 25 });
    expect(readClientSettings(reader({ pythonPath: ' /opt/py/bin/python ', importStrategy: 'fromEnvironment' }))).toMatchObject({
      pythonPath: '/opt/py/bin/python',
      importStrategy: 'fromEnvironment',
    });
  });
});
