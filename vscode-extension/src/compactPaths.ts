/**
 * "Compact paths" (docs/protocol.md): asked with `compactPaths: true`, dsh/scopes and
 * dsh/context/preview may leave out a file's `path` and `displayPath` where its `scope` and the
 * answer's `projectRoot` give them back. A chain a thousand levels deep otherwise carries every
 * path three times, megabytes per answer.
 *
 * SidecarClient.request asks so and expands the answer in one place, keyed by method, so every
 * caller (and every fake Sidecar in the tests) keeps seeing whole ScopeFiles. Host-only: it
 * reads protocol.ts, which src/shared/ must not import.
 */
import { CONTEXT_PREVIEW, type RequestMethod, SCOPES } from './methods';
import type { RequestParams, RequestResult, ScopeFile, WholeScopeFile } from './protocol';

/** The requests whose answer lists ScopeFiles that may come compact. */
const COMPACT_METHODS: ReadonlySet<RequestMethod> = new Set<RequestMethod>([CONTEXT_PREVIEW, SCOPES]);

/** An answer listing ScopeFiles, as the wire may send it. */
export interface CompactFilesResult {
  projectRoot: string;
  files: ScopeFile[];
}

/**
 * The display path a scope key names: the key is "<dir>\0<name>", "." being the project root.
 * A key without NUL reads as all directory and no name, as the server's own split does; the
 * server then never leaves displayPath out, since this would not give it back.
 */
export function scopeDisplayPath(scope: string): string {
  const nul = scope.indexOf('\0');
  const dir = nul < 0 ? scope : scope.slice(0, nul);
  const name = nul < 0 ? '' : scope.slice(nul + 1);
  return dir === '.' ? name : `${dir}/${name}`;
}

/** `file` with the paths the server left out put back; a whole file is returned as it is. */
export function expandScopeFile(file: ScopeFile, projectRoot: string): WholeScopeFile {
  if (file.path !== undefined && file.displayPath !== undefined) return file as WholeScopeFile;
  const { path, displayPath, ...rest } = file;
  const display = displayPath ?? scopeDisplayPath(file.scope);
  // path and displayPath first, where a whole answer has them.
  return { path: path ?? `${projectRoot}/${display}`, displayPath: display, ...rest };
}

/** `result` with every file whole; nothing else of it changes (imports keep their own paths). */
export function expandCompactPaths<R extends CompactFilesResult>(
  result: R,
): Omit<R, 'files'> & { files: WholeScopeFile[] } {
  return { ...result, files: result.files.map((f) => expandScopeFile(f, result.projectRoot)) };
}

/** The params sent for `method`: the requests that may answer compact always ask so. */
export function askCompactPaths<M extends RequestMethod>(method: M, params: RequestParams<M>): RequestParams<M> {
  return COMPACT_METHODS.has(method) ? { ...params, compactPaths: true } : params;
}

/**
 * The answer to `method` as its callers expect it (RequestResult), from the one that arrived
 * for params made by `askCompactPaths`.
 */
export function expandAnswer<M extends RequestMethod>(method: M, answer: unknown): RequestResult<M> {
  if (!COMPACT_METHODS.has(method) || !hasFiles(answer)) return answer as RequestResult<M>;
  // Only dsh/scopes and dsh/context/preview get here, and both answer { projectRoot, files }.
  return expandCompactPaths(answer) as unknown as RequestResult<M>;
}

function hasFiles(answer: unknown): answer is CompactFilesResult {
  return typeof answer === 'object' && answer !== null && Array.isArray((answer as { files?: unknown }).files);
}
