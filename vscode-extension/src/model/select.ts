/** Which chat model the panel talks to, from the `dsh.model.*` settings. */
import * as vscode from 'vscode';
import type { ClientSettings } from '../settings';
import { OpenAiChatModel } from './openai';
import { type ChatModel, ModelError } from './types';
import { lmRuntime, selectLmModel, VscodeLmChatModel } from './vscodeLm';

export const API_KEY_SECRET = 'dsh.model.apiKey';

/**
 * The API key for the OpenAI-compatible endpoint: the one stored with "DSH: Set Model API Key"
 * wins over the environment, since it is the more deliberate choice.
 */
export async function resolveApiKey(
  secrets: Pick<vscode.SecretStorage, 'get'>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string | undefined> {
  const stored = await secrets.get(API_KEY_SECRET);
  for (const candidate of [stored, env['DSH_API_KEY'], env['OPENAI_API_KEY']]) {
    if (candidate !== undefined && candidate.trim() !== '') return candidate.trim();
  }
  return undefined;
}

export async function createChatModel(
  settings: ClientSettings,
  secrets: Pick<vscode.SecretStorage, 'get'>,
): Promise<ChatModel> {
  const useOpenAi =
    settings.provider === 'openai' || (settings.provider === 'auto' && settings.baseUrl !== '');
  if (useOpenAi) {
    if (settings.baseUrl === '') throw new ModelError('Set dsh.model.baseUrl to an OpenAI-compatible endpoint.');
    if (settings.modelName === '') throw new ModelError('Set dsh.model.name to the model to use.');
    return new OpenAiChatModel({
      baseUrl: settings.baseUrl,
      model: settings.modelName,
      apiKey: () => resolveApiKey(secrets),
      idleTimeoutMs: settings.requestTimeoutMs,
    });
  }
  const runtime = lmRuntime();
  if (runtime === undefined) {
    throw new ModelError(
      'This editor offers no language models (vscode.lm). Set dsh.model.baseUrl and dsh.model.name to use an OpenAI-compatible endpoint.',
    );
  }
  const chat = await selectLmModel(runtime, settings.modelName);
  if (chat === undefined) {
    throw new ModelError(
      settings.modelName === ''
        ? 'The editor offers no chat model. Set dsh.model.baseUrl and dsh.model.name to use an OpenAI-compatible endpoint.'
        : `The editor offers no chat model named "${settings.modelName}".`,
    );
  }
  return new VscodeLmChatModel(runtime, chat);
}
