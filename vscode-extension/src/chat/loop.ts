/**
 * One agent turn: prepare a step with the sidecar, ask the model, run its tool calls, record
 * everything, and go on with the next step until the model answers without tools.
 *
 * The loop owns the protocol order of docs/protocol.md (The agent loop, Touches):
 *   step/prepare → model → append assistant/message → per call: append tool/result and notify
 *   dsh/tool/result → step/end → (next step) … → turn/end.
 * Touches reported during a step are released by its step/end, so the next step/prepare returns
 * the instruction updates they caused, after the tool results.
 */
import type { Sidecar } from '../client';
import {
  SESSION_APPEND,
  STEP_END,
  STEP_PREPARE,
  TOOL_RESULT,
  TURN_END,
} from '../methods';
import type { ChatModel, ModelResponse } from '../model/types';
import type {
  AppendEvent,
  Message,
  AppendResult,
  StepPrepareParams,
  PrepareResult,
  ToolResultParams,
} from '../protocol';
import { type ToolCall, type ToolDefinition, type ToolOutcome } from '../tools';
import { assistantMessage, timeNotesBeforePrompts, toolResultMessage } from './convert';

export interface LoopObserver {
  /** A message entered the conversation (context from the sidecar, the answer, a tool result). */
  onMessage(message: Message): void;
  /** Step 1's `dsh/step/prepare` succeeded: the prompt is in the session's log from now on. */
  onPromptRecorded?(): void;
  /** Streaming answer text of the model call in progress. */
  onTextDelta(delta: string): void;
  onStepStart?(step: number): void;
}

export interface TurnOptions {
  sessionId: string;
  turn: number;
  /** The user's prompt; absent for a retry, whose prompt is already in the history. */
  prompt?: string;
  clientTimeZone?: string;
  /** The session's visible history before this turn, in model order. */
  history: readonly Message[];
  model: ChatModel;
  system?: string;
  tools: readonly ToolDefinition[];
  /** Runs one call; `signal` aborts a call that waits (e.g. for the user's approval). */
  runTool(call: ToolCall, signal: AbortSignal): Promise<ToolOutcome>;
  maxSteps: number;
  signal: AbortSignal;
  observer: LoopObserver;
}

export type TurnEndReason = 'completed' | 'aborted' | 'error' | 'max-steps';

export interface TurnOutcome {
  reason: TurnEndReason;
  steps: number;
  error?: unknown;
  /** Whether the prompt reached the log (false: the turn failed before the model was asked). */
  promptRecorded: boolean;
}

export class AgentLoop {
  constructor(private readonly sidecar: Sidecar) {}

  async runTurn(o: TurnOptions): Promise<TurnOutcome> {
    const conversation: Message[] = [...o.history];
    let step = 0;
    let stepOpen = false;
    let turnOpen = false;
    let promptRecorded = false;
    let reason: TurnEndReason = 'completed';
    let failure: unknown;
    try {
      for (;;) {
        if (o.signal.aborted) {
          reason = 'aborted';
          break;
        }
        if (step >= o.maxSteps) {
          reason = 'max-steps';
          break;
        }
        step += 1;
        o.observer.onStepStart?.(step);
        const params: StepPrepareParams = { sessionId: o.sessionId, turn: o.turn, step };
        if (step === 1 && o.prompt !== undefined) {
          params.prompt = { text: o.prompt };
          if (o.clientTimeZone !== undefined) params.prompt.clientTimeZone = o.clientTimeZone;
        }
        const prepared = await this.sidecar.request(STEP_PREPARE, params);
        stepOpen = true;
        turnOpen = true;
        if (step === 1) {
          promptRecorded = true;
          o.observer.onPromptRecorded?.();
        }
        for (const message of prepared.messages) {
          conversation.push(message);
          o.observer.onMessage(message);
        }

        let streamed = '';
        let response: ModelResponse;
        try {
          response = await o.model.complete({
            // The log's order, except that a time note is read before its prompt, not after.
            messages: timeNotesBeforePrompts(conversation),
            ...(o.system !== undefined ? { system: o.system } : {}),
            tools: o.tools,
            signal: o.signal,
            onText: (delta) => {
              streamed += delta;
              o.observer.onTextDelta(delta);
            },
          });
        } catch (err) {
          // Stopped mid-answer: what the model said so far stays in the session (marked as
          // stopped), so the user sees it and the next turn's model knows it was said.
          if (o.signal.aborted && streamed.trim() !== '') {
            const partial = assistantMessage(streamed, [], o.model, { stopped: true });
            await this.append(o.sessionId, [
              { type: 'assistant/message', data: { turn: o.turn, step, message: partial }, surfaceOp: 'append' },
            ]);
            conversation.push(partial);
            o.observer.onMessage(partial);
          }
          throw err;
        }
        const answer = assistantMessage(response.text, response.toolCalls, o.model);
        await this.append(o.sessionId, [
          { type: 'assistant/message', data: { turn: o.turn, step, message: answer }, surfaceOp: 'append' },
        ]);
        conversation.push(answer);
        o.observer.onMessage(answer);

        for (const call of response.toolCalls) {
          // A call the model made is answered even after an abort, so the log stays pairable.
          const aborted = o.signal.aborted;
          const outcome: ToolOutcome = aborted
            ? { text: 'Error: the turn was stopped before this tool ran', isError: true }
            : await o.runTool(call, o.signal);
          const result = toolResultMessage(call.id, outcome.text);
          await this.append(o.sessionId, [
            { type: 'tool/result', data: { turn: o.turn, step, message: result }, surfaceOp: 'append' },
          ]);
          const notification: ToolResultParams = {
            sessionId: o.sessionId,
            token: call.id,
            name: call.name,
            // The absolute path, so the sidecar's touch does not depend on how it resolves
            // relative paths; the model's own arguments are in the log.
            arguments:
              outcome.resolvedPath !== undefined
                ? { ...call.arguments, file_path: outcome.resolvedPath }
                : call.arguments,
            isError: outcome.isError,
          };
          if (aborted) notification.aborted = true;
          await this.sidecar.notify(TOOL_RESULT, notification);
          conversation.push(result);
          o.observer.onMessage(result);
        }

        await this.sidecar.request(STEP_END, { sessionId: o.sessionId, turn: o.turn, step });
        stepOpen = false;
        if (response.toolCalls.length === 0) break;
      }
    } catch (err) {
      reason = o.signal.aborted ? 'aborted' : 'error';
      failure = err;
    }
    // Close what is open even after a failure, so the next turn starts from a clean state.
    if (stepOpen) {
      await this.sidecar
        .request(STEP_END, { sessionId: o.sessionId, turn: o.turn, step })
        .catch(() => undefined);
    }
    // A failed first step/prepare wrote nothing, so there is no turn to end.
    if (turnOpen) {
      await this.sidecar
        .request(TURN_END, { sessionId: o.sessionId, turn: o.turn, reason })
        .catch(() => undefined);
    }
    const outcome: TurnOutcome = { reason, steps: step, promptRecorded };
    if (failure !== undefined) outcome.error = failure;
    return outcome;
  }

  private async append(sessionId: string, events: AppendEvent[]): Promise<number[]> {
    const result = await this.sidecar.request(SESSION_APPEND, { sessionId, events });
    return result.seqs;
  }
}
