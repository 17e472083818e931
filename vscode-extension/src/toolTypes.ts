/**
 * The shapes of the agent's tools, apart from their implementation (tools.ts, which needs Node):
 * the conversion code that the webview also compiles only needs these.
 */
export const TOOL_NAMES = ['read', 'write', 'edit'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

export interface ToolDefinition {
  name: ToolName;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

export interface ToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  /** Set when the model's argument text was not a JSON object; the call then fails. */
  argumentsError?: string;
}

export interface ToolOutcome {
  text: string;
  isError: boolean;
  /** The absolute path the call resolved to, when it got that far. */
  resolvedPath?: string;
}

