/** What the panel says about the model it will use, before anything is sent (pure). */
import type { ClientSettings } from '../settings';

export interface ModelInfo {
  /** "fake-model at http://127.0.0.1:8000/v1", or why there is none. */
  text: string;
  configured: boolean;
}

/**
 * `editorModels` lists the names `vscode.lm` offers (undefined when the editor has no such API).
 * Mirrors createChatModel's choice, so the panel never names a model the turn will not use.
 */
export function describeModel(settings: ClientSettings, editorModels: readonly { name: string; family: string; id: string }[] | undefined): ModelInfo {
  const useEndpoint = settings.provider === 'openai' || (settings.provider === 'auto' && settings.baseUrl !== '');
  if (useEndpoint) {
    if (settings.baseUrl === '') return { text: 'No model is configured: dsh.model.baseUrl is empty.', configured: false };
    if (settings.modelName === '') {
      return { text: `No model is configured: dsh.model.name is empty (endpoint ${settings.baseUrl}).`, configured: false };
    }
    return { text: `${settings.modelName} at ${settings.baseUrl}`, configured: true };
  }
  if (editorModels === undefined) return { text: 'No model is configured (this editor offers none).', configured: false };
  const wanted = settings.modelName;
  const model = wanted === '' ? editorModels[0] : editorModels.find((m) => m.family === wanted || m.id === wanted || m.name === wanted);
  if (model === undefined) {
    return {
      text: wanted === '' ? 'No model is configured (the editor offers no chat model).' : `No model is configured: the editor offers no model named "${wanted}".`,
      configured: false,
    };
  }
  return { text: `${model.name} (offered by the editor)`, configured: true };
}
