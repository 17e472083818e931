/**
 * A small stand-in for the `vscode` module: just what the modules under unit test touch.
 * Behaviour that matters (events, cancellation) is real; UI calls are recorded no-ops.
 */

export class Disposable {
  constructor(private readonly fn: () => void = () => undefined) {}
  dispose(): void {
    this.fn();
  }
}

export class EventEmitter<T> {
  private listeners: ((e: T) => void)[] = [];
  readonly event = (listener: (e: T) => void): Disposable => {
    this.listeners.push(listener);
    return new Disposable(() => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    });
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
  dispose(): void {
    this.listeners = [];
  }
}

export class CancellationTokenSource {
  private readonly emitter = new EventEmitter<void>();
  readonly token = {
    isCancellationRequested: false,
    onCancellationRequested: this.emitter.event,
  };
  cancel(): void {
    if (!this.token.isCancellationRequested) {
      this.token.isCancellationRequested = true;
      this.emitter.fire();
    }
  }
  dispose(): void {
    this.emitter.dispose();
  }
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly path: string,
  ) {}
  static file(path: string): Uri {
    return new Uri('file', path);
  }
  static parse(value: string): Uri {
    const m = /^([a-z][\w+.-]*):\/\/[^/]*(.*)$/i.exec(value);
    return m ? new Uri(m[1]!, decodeURIComponent(m[2]!)) : new Uri('file', value);
  }
  static joinPath(base: Uri, ...parts: string[]): Uri {
    return new Uri(base.scheme, [base.path.replace(/\/$/, ''), ...parts].join('/'));
  }
  get fsPath(): string {
    return this.path;
  }
  toString(): string {
    return `${this.scheme}://${this.path}`;
  }
}

export enum ViewColumn {
  Active = -1,
  Beside = -2,
  One = 1,
}

export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}

/** Settings the tests set per key, e.g. `settings['dsh']['model.baseUrl'] = '...'`. */
export const settings: Record<string, Record<string, unknown>> = {};

export const workspace = {
  workspaceFolders: [] as { uri: Uri; name: string; index: number }[],
  getConfiguration(section: string) {
    return {
      get<T>(key: string, fallback?: T): T | undefined {
        const value = settings[section]?.[key];
        return (value === undefined ? fallback : value) as T | undefined;
      },
    };
  },
  onDidChangeConfiguration: new EventEmitter<unknown>().event,
  onDidSaveTextDocument: new EventEmitter<unknown>().event,
  onDidCreateFiles: new EventEmitter<unknown>().event,
  onDidDeleteFiles: new EventEmitter<unknown>().event,
  onDidRenameFiles: new EventEmitter<unknown>().event,
  getWorkspaceFolder: (_uri: Uri) => undefined,
  asRelativePath: (uri: Uri | string) => (typeof uri === 'string' ? uri : uri.path),
};

export const window = {
  activeTextEditor: undefined as unknown,
  onDidChangeActiveTextEditor: new EventEmitter<unknown>().event,
  showErrorMessage: async (..._args: unknown[]) => undefined,
  showInformationMessage: async (..._args: unknown[]) => undefined,
};

export const commands = {
  executeCommand: async (..._args: unknown[]) => undefined,
  registerCommand: (..._args: unknown[]) => new Disposable(),
};
