/**
 * The interpreter selected in Microsoft's Python extension (`ms-python.python`), when that
 * extension is installed. Its API is described structurally (no dependency on its typings) and
 * every step is optional: an older or a broken Python extension just means "no suggestion".
 */
import * as vscode from 'vscode';

export const PYTHON_EXTENSION_ID = 'ms-python.python';
/** The Python extension can take long to activate; the sidecar does not wait longer than this. */
const ACTIVATION_TIMEOUT_MS = 15_000;

interface EnvironmentPath {
  id: string;
  path: string;
}

interface PythonApi {
  ready?: Thenable<void>;
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): EnvironmentPath;
    resolveEnvironment(env: EnvironmentPath | string): Thenable<{ executable: { uri?: vscode.Uri } } | undefined>;
    onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
  };
  settings?: {
    getExecutionDetails(resource?: vscode.Uri): { execCommand: string[] | undefined };
  };
}

/** The selected interpreter's executable for `resource`, or undefined. */
export async function selectedPythonInterpreter(
  resource: vscode.Uri | undefined,
  log: (message: string) => void,
): Promise<string | undefined> {
  const api = await pythonApi(log);
  if (api === undefined) return undefined;
  try {
    const environments = api.environments;
    if (environments !== undefined) {
      const active = environments.getActiveEnvironmentPath(resource);
      const resolved = await environments.resolveEnvironment(active);
      const executable = resolved?.executable.uri?.fsPath;
      if (executable !== undefined && executable !== '') return executable;
      if (active.path !== '') return active.path;
    }
    // The older API: a command line, usable when it is just the interpreter.
    const command = api.settings?.getExecutionDetails(resource).execCommand;
    if (command !== undefined && command.length === 1 && command[0] !== undefined && command[0] !== '') return command[0];
  } catch (err) {
    log(`the Python extension could not name its interpreter: ${err instanceof Error ? err.message : String(err)}`);
  }
  return undefined;
}

/** Fires when the user selects another interpreter in the Python extension. */
export async function onPythonInterpreterChanged(
  listener: () => void,
  log: (message: string) => void,
): Promise<vscode.Disposable | undefined> {
  const event = (await pythonApi(log))?.environments?.onDidChangeActiveEnvironmentPath;
  return event !== undefined ? event(() => listener()) : undefined;
}

async function pythonApi(log: (message: string) => void): Promise<PythonApi | undefined> {
  const extension = vscode.extensions.getExtension<PythonApi>(PYTHON_EXTENSION_ID);
  if (extension === undefined) return undefined;
  try {
    const api = extension.isActive ? extension.exports : await withTimeout(extension.activate(), ACTIVATION_TIMEOUT_MS);
    if (api === undefined) {
      log(`the Python extension did not activate within ${ACTIVATION_TIMEOUT_MS / 1000} s`);
      return undefined;
    }
    if (api.ready !== undefined) await withTimeout(Promise.resolve(api.ready), ACTIVATION_TIMEOUT_MS);
    return api;
  } catch (err) {
    log(`the Python extension failed to activate: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  }
}

async function withTimeout<T>(promise: Thenable<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([Promise.resolve(promise), timeout]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
