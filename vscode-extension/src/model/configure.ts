/**
 * "DSH: Set Up the Chat Model": a guided choice of provider, endpoint, model and key, written to
 * the User settings (the walkthrough's model step runs it). Every step can be cancelled with Esc,
 * which leaves the settings as they were.
 */
import * as vscode from 'vscode';
import { readClientSettings } from '../settings';
import { listEndpointModels } from './openai';
import { API_KEY_SECRET, resolveApiKey } from './select';
import { lmRuntime } from './vscodeLm';

const LOCAL_EXAMPLE = 'http://127.0.0.1:11434/v1';

/** An http(s) URL, or why not. */
export function checkBaseUrl(value: string): string | undefined {
  const trimmed = value.trim();
  if (trimmed === '') return 'The base URL of the endpoint, e.g. https://api.openai.com/v1';
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return 'Not a URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'Only http:// and https:// endpoints';
  if (/\/chat\/completions\/?$/.test(url.pathname)) return 'Leave out /chat/completions: the part before it';
  return undefined;
}

export async function configureModel(secrets: vscode.SecretStorage): Promise<boolean> {
  const config = vscode.workspace.getConfiguration('dsh');
  const current = readClientSettings(config);
  const lm = lmRuntime();
  const choice = await vscode.window.showQuickPick(
    [
      {
        label: 'OpenAI-compatible endpoint',
        detail: 'OpenAI, Azure OpenAI, OpenRouter, or a local Ollama, vLLM or llama.cpp server',
        provider: 'openai' as const,
      },
      {
        label: 'A chat model this editor offers',
        detail: lm === undefined ? 'This editor offers none (vscode.lm needs VS Code 1.90+)' : 'vscode.lm, e.g. GitHub Copilot',
        provider: 'vscode-lm' as const,
      },
    ],
    { title: 'DSH: Chat model (1/3)', placeHolder: 'Which model should the agent chat use?', ignoreFocusOut: true },
  );
  if (choice === undefined) return false;
  const target = vscode.ConfigurationTarget.Global;

  if (choice.provider === 'vscode-lm') {
    if (lm === undefined) {
      void vscode.window.showWarningMessage('DSH: this editor offers no chat models; use an OpenAI-compatible endpoint.');
      return false;
    }
    const models = await lm.lm.selectChatModels();
    if (models.length === 0) {
      void vscode.window.showWarningMessage('DSH: no chat model is available in this editor (is Copilot signed in?).');
      return false;
    }
    const picked = await vscode.window.showQuickPick(
      models.map((m) => ({ label: m.name, description: `${m.vendor} · ${m.family}`, family: m.family })),
      { title: 'DSH: Chat model (2/3)', placeHolder: 'Which of the editor’s models?', ignoreFocusOut: true },
    );
    if (picked === undefined) return false;
    await config.update('model.provider', 'vscode-lm', target);
    await config.update('model.name', picked.family, target);
    void vscode.window.showInformationMessage(`DSH: the agent chat uses ${picked.label}.`);
    return true;
  }

  const baseUrl = await vscode.window.showInputBox({
    title: 'DSH: Chat model (2/3)',
    prompt: 'Base URL of the OpenAI-compatible API (the part before /chat/completions)',
    value: current.baseUrl !== '' ? current.baseUrl : LOCAL_EXAMPLE,
    validateInput: checkBaseUrl,
    ignoreFocusOut: true,
  });
  if (baseUrl === undefined) return false;
  const url = baseUrl.trim().replace(/\/+$/, '');
  let key = await resolveApiKey(secrets);
  let models: string[] = [];
  let listError: string | undefined;
  try {
    models = await listEndpointModels(url, key);
  } catch (err) {
    listError = err instanceof Error ? err.message : String(err);
  }
  if (listError !== undefined && /\b401\b|\b403\b/.test(listError)) {
    // The endpoint wants a key before it lists anything: ask now, then list again.
    const entered = await askApiKey(secrets);
    if (entered !== undefined) {
      key = entered;
      models = await listEndpointModels(url, key).catch(() => []);
    }
  }
  const name = await pickModelName(models, current.modelName, listError);
  if (name === undefined) return false;
  await config.update('model.provider', 'openai', target);
  await config.update('model.baseUrl', url, target);
  await config.update('model.name', name, target);
  if (key === undefined) {
    const answer = await vscode.window.showInformationMessage(
      `DSH: the agent chat uses ${name} at ${url}. Does this endpoint need an API key?`,
      'Set API Key',
      'No Key Needed',
    );
    if (answer === 'Set API Key') await askApiKey(secrets);
  } else {
    void vscode.window.showInformationMessage(`DSH: the agent chat uses ${name} at ${url}.`);
  }
  return true;
}

async function pickModelName(models: string[], current: string, listError: string | undefined): Promise<string | undefined> {
  if (models.length > 0) {
    const other = { label: '$(edit) Another model…', id: undefined };
    const picked = await vscode.window.showQuickPick(
      [...models.map((id) => ({ label: id, id, description: id === current ? 'current' : '' })), other],
      { title: 'DSH: Chat model (3/3)', placeHolder: 'The endpoint offers these models', ignoreFocusOut: true },
    );
    if (picked === undefined) return undefined;
    if (picked.id !== undefined) return picked.id;
  }
  const name = await vscode.window.showInputBox({
    title: 'DSH: Chat model (3/3)',
    prompt:
      listError !== undefined
        ? `Model name (the endpoint did not list its models: ${listError})`
        : 'Model name, as the endpoint knows it (e.g. gpt-4o, llama3.1)',
    value: current,
    validateInput: (v) => (v.trim() === '' ? 'A model name' : undefined),
    ignoreFocusOut: true,
  });
  return name?.trim();
}

/** The "DSH: Set Model API Key" prompt; returns the key stored, if any. */
export async function askApiKey(secrets: vscode.SecretStorage): Promise<string | undefined> {
  const key = await vscode.window.showInputBox({
    title: 'DSH: Model API key',
    prompt: 'API key for the OpenAI-compatible endpoint (kept in the editor’s secret storage; empty removes it).',
    password: true,
    ignoreFocusOut: true,
  });
  if (key === undefined) return undefined;
  if (key.trim() === '') {
    await secrets.delete(API_KEY_SECRET);
    void vscode.window.showInformationMessage('DSH: model API key removed.');
    return undefined;
  }
  await secrets.store(API_KEY_SECRET, key.trim());
  void vscode.window.showInformationMessage('DSH: model API key saved.');
  return key.trim();
}
