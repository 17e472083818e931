import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readClientSettings, readServerSettings, SERVER_SETTING_KEYS } from '../src/settings';

const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as {
  contributes: { configuration: { properties: Record<string, { default: unknown }> }[] };
};
const properties = manifest.contributes.configuration[0]!.properties;

/** A config reader that answers with the manifest defaults overlaid by `values`. */
function reader(values: Record<string, unknown> = {}) {
  return {
    get<T>(key: string): T | undefined {
      if (key in values) return values[key] as T;
      return properties[`dsh.${key}`]?.default as T | undefined;
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
