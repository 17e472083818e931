/**
 * Which Python runs the sidecar. In order: `dsh.pythonPath` when it is set (and then only it:
 * the user asked for that interpreter), else the Python extension's selected interpreter, else
 * `python3` and `python` on PATH. Each candidate is probed by running the launcher with
 * `--probe`; the first one that is Python 3.11+ and can import the sidecar (bundled or from its
 * own environment) wins. No vscode import: the search is unit-tested with real processes.
 */
import { type ExecFileException, execFile } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';

export const MINIMUM_PYTHON: readonly [number, number] = [3, 11];
/** A first start of a cold interpreter on a busy machine can be slow; never wait forever. */
export const PROBE_TIMEOUT_MS = 30_000;

export type ImportStrategy = 'useBundled' | 'fromEnvironment';
export type InterpreterSource = 'setting' | 'python-extension' | 'path';

export interface Candidate {
  command: string;
  source: InterpreterSource;
}

/** What `launch.py --probe` prints. */
export interface ProbeResult {
  executable: string;
  version: number[];
  supported: boolean;
  bundled: boolean;
  sidecar?: { version: string; path: string };
  importError?: string;
}

export interface FoundInterpreter {
  kind: 'found';
  command: string;
  source: InterpreterSource;
  probe: ProbeResult;
}

export interface Rejected {
  candidate: Candidate;
  /** Why it cannot run the sidecar, e.g. "not found", "Python 3.9.18 is too old". */
  problem: string;
}

export interface NoInterpreter {
  kind: 'missing';
  /** True when dsh.pythonPath named the one interpreter to use. */
  explicit: boolean;
  rejected: Rejected[];
}

export type InterpreterSearch = FoundInterpreter | NoInterpreter;

export type Probe = (command: string) => Promise<ProbeResult>;

export class ProbeError extends Error {}

/** The candidates to try, in order, without duplicates. */
export function interpreterCandidates(
  pythonPath: string | undefined,
  fromPythonExtension: string | undefined,
  platform: NodeJS.Platform = process.platform,
): Candidate[] {
  if (pythonPath !== undefined) return [{ command: pythonPath, source: 'setting' }];
  const out: Candidate[] = [];
  if (fromPythonExtension !== undefined) out.push({ command: fromPythonExtension, source: 'python-extension' });
  const onPath = platform === 'win32' ? ['python', 'python3'] : ['python3', 'python'];
  for (const command of onPath) out.push({ command, source: 'path' });
  return out;
}

/** The first candidate that can run the sidecar, or every reason none can. */
export async function findInterpreter(candidates: readonly Candidate[], probe: Probe): Promise<InterpreterSearch> {
  const rejected: Rejected[] = [];
  for (const candidate of candidates) {
    let result: ProbeResult;
    try {
      result = await probe(candidate.command);
    } catch (err) {
      rejected.push({ candidate, problem: err instanceof Error ? err.message : String(err) });
      continue;
    }
    const problem = unusable(result);
    if (problem === undefined) return { kind: 'found', command: candidate.command, source: candidate.source, probe: result };
    rejected.push({ candidate, problem });
  }
  return { kind: 'missing', explicit: candidates.some((c) => c.source === 'setting'), rejected };
}

/** Why a probed interpreter cannot run the sidecar, or undefined when it can. */
export function unusable(result: ProbeResult): string | undefined {
  const version = result.version.join('.');
  if (!result.supported) return `Python ${version} is too old (${MINIMUM_PYTHON.join('.')} or newer is needed)`;
  if (result.sidecar === undefined) {
    const why = result.importError ?? 'the sidecar is not importable';
    return result.bundled
      ? `Python ${version} cannot load the bundled sidecar (${why})`
      : `Python ${version} has no dsh-sidecar installed (${why})`;
  }
  return undefined;
}

/** One line for the notification: what is missing and what was tried. */
export function describeMissing(search: NoInterpreter): string {
  if (search.explicit) {
    const r = search.rejected[0];
    return r === undefined
      ? 'dsh.pythonPath does not name a usable Python.'
      : `dsh.pythonPath is "${r.candidate.command}": ${r.problem}.`;
  }
  const tried = search.rejected.map((r) => `${label(r.candidate)}: ${r.problem}`).join('; ');
  return `No Python ${MINIMUM_PYTHON.join('.')} or newer was found (${tried}).`;
}

function label(candidate: Candidate): string {
  return candidate.source === 'python-extension' ? `the Python extension's ${candidate.command}` : candidate.command;
}

/**
 * `~`, `${userHome}` and `${workspaceFolder}` expand as in the Python extension's path settings;
 * a relative path with a directory part is taken from the (first) workspace folder, since the
 * sidecar does not run there.
 */
export function expandPythonPath(value: string, workspaceFolder: string | undefined, home = os.homedir()): string {
  let out = value.trim();
  out = out.replace(/\$\{userHome\}/g, home);
  if (workspaceFolder !== undefined) out = out.replace(/\$\{workspaceFolder\}/g, workspaceFolder);
  if (out === '~' || out.startsWith('~/') || out.startsWith('~\\')) out = path.join(home, out.slice(1));
  const hasDirectory = out.includes('/') || out.includes('\\');
  if (hasDirectory && !path.isAbsolute(out) && workspaceFolder !== undefined) out = path.resolve(workspaceFolder, out);
  return out;
}

/**
 * Run `<command> launch.py --probe` for real. Its working directory is the launcher's own, never
 * a workspace folder, so nothing in a workspace is on the probing interpreter's path.
 */
export function probeWithLauncher(launcher: string, strategy: ImportStrategy, env: NodeJS.ProcessEnv = process.env): Probe {
  return (command) =>
    new Promise<ProbeResult>((resolve, reject) => {
      execFile(
        command,
        [launcher, '--import-strategy', strategy, '--probe'],
        { cwd: path.dirname(launcher), env, timeout: PROBE_TIMEOUT_MS, windowsHide: true, maxBuffer: 1 << 20 },
        (err, stdout, stderr) => {
          if (err !== null) {
            reject(new ProbeError(probeFailure(err, stderr)));
            return;
          }
          try {
            const parsed = JSON.parse(stdout.trim().split('\n').pop() ?? '') as ProbeResult;
            if (!Array.isArray(parsed.version)) throw new Error('no version');
            resolve(parsed);
          } catch {
            reject(new ProbeError(`did not answer like a Python interpreter (${oneLine(stdout || stderr) || 'no output'})`));
          }
        },
      );
    });
}

function probeFailure(err: ExecFileException, stderr: string): string {
  if (err.code === 'ENOENT') return 'not found';
  if (err.code === 'EACCES') return 'not executable';
  if (err.killed === true || err.signal === 'SIGTERM') return `did not answer within ${PROBE_TIMEOUT_MS / 1000} s`;
  const detail = oneLine(stderr);
  return detail !== '' ? `failed: ${detail}` : `failed (${String(err.code ?? err.message)})`;
}

function oneLine(text: string): string {
  const lines = text.trim().split(/\r?\n/).filter((l) => l.trim() !== '');
  const last = lines[lines.length - 1] ?? '';
  return last.length > 200 ? `${last.slice(0, 200)}…` : last;
}
