/**
 * Prompts typed while the agent works. Enter during a turn queues the message (it does not steer
 * the running turn); the queue is sent, one prompt per turn, when the turn completes. A turn that
 * is stopped or fails sends nothing more: the queued text goes back into the prompt box, so the
 * user decides again with what just happened in view (the webview merges it with
 * `mergeIntoPrompt`, shared/text.ts).
 */
import type { QueuedPrompt } from '../shared/chatMessages';

export class PromptQueue {
  private items: QueuedPrompt[] = [];
  private nextId = 1;

  get size(): number {
    return this.items.length;
  }

  list(): QueuedPrompt[] {
    return [...this.items];
  }

  add(text: string): QueuedPrompt {
    const item = { id: this.nextId++, text };
    this.items.push(item);
    return item;
  }

  remove(id: number): boolean {
    const before = this.items.length;
    this.items = this.items.filter((i) => i.id !== id);
    return this.items.length !== before;
  }

  /** The next prompt to send. */
  shift(): QueuedPrompt | undefined {
    return this.items.shift();
  }

  /** Empty the queue; returns the texts, oldest first, for the prompt box. */
  drain(): string[] {
    const texts = this.items.map((i) => i.text);
    this.items = [];
    return texts;
  }
}
