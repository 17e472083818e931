import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  describeMissing,
  expandPythonPath,
  findInterpreter,
  interpreterCandidates,
  type ProbeResult,
  probeWithLauncher,
  unusable,
} from '../src/python/interpreter';

const EXT = path.resolve(__dirname, '..');
const LAUNCHER = path.join(EXT, 'bundled', 'tool', 'launch.py');
const VENV_PYTHON = path.resolve(EXT, '..', '.venv', 'bin', 'python');

const probed = (overrides: Partial<ProbeResult>): ProbeResult => ({
  executable: '/usr/bin/python3',
  version: [3, 12, 1],
  supported: true,
  bundled: true,
  sidecar: { version: '0.1.0', path: '/ext/bundled/libs/dsh_sidecar' },
  ...overrides,
});

describe('interpreterCandidates', () => {
  it('uses dsh.pythonPath alone when it is set', () => {
    expect(interpreterCandidates('/opt/py/bin/python', '/venv/bin/python')).toEqual([
      { command: '/opt/py/bin/python', source: 'setting' },
    ]);
  });
  it('tries the Python extension first, then PATH', () => {
    expect(interpreterCandidates(undefined, '/venv/bin/python', 'linux')).toEqual([
      { command: '/venv/bin/python', source: 'python-extension' },
      { command: 'python3', source: 'path' },
      { command: 'python', source: 'path' },
    ]);
    expect(interpreterCandidates(undefined, undefined, 'win32').map((c) => c.command)).toEqual(['python', 'python3']);
  });
});

describe('findInterpreter', () => {
  it('takes the first usable candidate and says why the others were passed over', async () => {
    const answers: Record<string, ProbeResult | Error> = {
      '/venv/bin/python': probed({ version: [3, 9, 18], supported: false, sidecar: undefined }),
      python3: new Error('not found'),
      python: probed({ executable: '/usr/bin/python' }),
    };
    const search = await findInterpreter(interpreterCandidates(undefined, '/venv/bin/python', 'linux'), async (c) => {
      const a = answers[c];
      if (a instanceof Error || a === undefined) throw a ?? new Error('unexpected');
      return a;
    });
    expect(search).toMatchObject({ kind: 'found', command: 'python', source: 'path' });
  });

  it('reports every rejected candidate when none works', async () => {
    const search = await findInterpreter(interpreterCandidates(undefined, undefined, 'linux'), async (c) => {
      if (c === 'python3') return probed({ version: [3, 10, 4], supported: false, sidecar: undefined });
      throw new Error('not found');
    });
    expect(search.kind).toBe('missing');
    if (search.kind !== 'missing') return;
    expect(search.explicit).toBe(false);
    expect(describeMissing(search)).toBe(
      'No Python 3.11 or newer was found (python3: Python 3.10.4 is too old (3.11 or newer is needed); python: not found).',
    );
  });

  it('names dsh.pythonPath when the interpreter it names is unusable', async () => {
    const search = await findInterpreter([{ command: '/bad/python', source: 'setting' }], async () => {
      throw new Error('not found');
    });
    expect(search.kind === 'missing' && describeMissing(search)).toBe('dsh.pythonPath is "/bad/python": not found.');
  });
});

describe('unusable', () => {
  it('explains a missing or broken sidecar', () => {
    expect(unusable(probed({}))).toBeUndefined();
    expect(unusable(probed({ bundled: false, sidecar: undefined, importError: "ModuleNotFoundError: No module named 'pygls'" }))).toBe(
      "Python 3.12.1 has no dsh-sidecar installed (ModuleNotFoundError: No module named 'pygls')",
    );
    expect(unusable(probed({ sidecar: undefined, importError: 'SyntaxError: bad' }))).toBe(
      'Python 3.12.1 cannot load the bundled sidecar (SyntaxError: bad)',
    );
  });
});

describe('expandPythonPath', () => {
  it('expands ~, ${userHome} and ${workspaceFolder}, and anchors relative paths at the folder', () => {
    expect(expandPythonPath('~/py/bin/python', '/ws', '/home/u')).toBe('/home/u/py/bin/python');
    expect(expandPythonPath('${userHome}/x/python', '/ws', '/home/u')).toBe('/home/u/x/python');
    expect(expandPythonPath('${workspaceFolder}/.venv/bin/python', '/ws', '/home/u')).toBe('/ws/.venv/bin/python');
    expect(expandPythonPath('.venv/bin/python', '/ws', '/home/u')).toBe('/ws/.venv/bin/python');
    expect(expandPythonPath(' python3.12 ', '/ws', '/home/u')).toBe('python3.12');
  });
});

describe('probeWithLauncher (real processes)', () => {
  const scratch: string[] = [];
  afterEach(() => {
    for (const dir of scratch.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('finds the development checkout’s sidecar in its virtualenv', async () => {
    const search = await findInterpreter([{ command: VENV_PYTHON, source: 'setting' }], probeWithLauncher(LAUNCHER, 'useBundled'));
    expect(search.kind).toBe('found');
    if (search.kind !== 'found') return;
    expect(search.probe.supported).toBe(true);
    expect(search.probe.bundled).toBe(false); // a checkout has no bundled/libs
    expect(search.probe.sidecar?.path).toBe(path.resolve(EXT, '..', 'server', 'dsh_sidecar'));
  });

  it('says "not found" for a path that does not exist', async () => {
    const probe = probeWithLauncher(LAUNCHER, 'useBundled');
    await expect(probe(path.join(os.tmpdir(), 'no-such-dir', 'python3'))).rejects.toThrow('not found');
  });

  it('tells a program that is not Python from one that fails', async () => {
    const probe = probeWithLauncher(LAUNCHER, 'useBundled');
    await expect(probe('/bin/echo')).rejects.toThrow(/did not answer like a Python interpreter/);
    await expect(probe('/bin/false')).rejects.toThrow(/^failed/);
  });

  it('reports a bundled sidecar that cannot be imported, and prefers bundled libraries', async () => {
    // A copy of the launcher beside a bundled/libs whose dsh_sidecar is broken.
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-launch-'));
    scratch.push(root);
    fs.mkdirSync(path.join(root, 'tool'));
    fs.mkdirSync(path.join(root, 'libs', 'dsh_sidecar'), { recursive: true });
    fs.copyFileSync(LAUNCHER, path.join(root, 'tool', 'launch.py'));
    fs.writeFileSync(path.join(root, 'libs', 'dsh_sidecar', '__init__.py'), 'raise ImportError("broken bundle")\n');
    const bundled = await probeWithLauncher(path.join(root, 'tool', 'launch.py'), 'useBundled')(VENV_PYTHON);
    expect(bundled.bundled).toBe(true);
    expect(bundled.sidecar).toBeUndefined();
    expect(unusable(bundled)).toBe(
      `Python ${bundled.version.join('.')} cannot load the bundled sidecar (ImportError: broken bundle)`,
    );
    // fromEnvironment: the interpreter's own sidecar wins over the broken bundle.
    const own = await probeWithLauncher(path.join(root, 'tool', 'launch.py'), 'fromEnvironment')(VENV_PYTHON);
    expect(own.sidecar?.path).toBe(path.resolve(EXT, '..', 'server', 'dsh_sidecar'));
  });
});
