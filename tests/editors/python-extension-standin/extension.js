// The environments API of ms-python.python, reduced to what the DSH extension asks: the active
// environment of a folder and its resolved executable. The interpreter is the one the test put in
// DSH_E2E_SELECTED_PYTHON (the extension host's environment).
const vscode = require('vscode');

exports.activate = function activate() {
  const python = process.env.DSH_E2E_SELECTED_PYTHON || '';
  const changed = new vscode.EventEmitter();
  return {
    ready: Promise.resolve(),
    environments: {
      getActiveEnvironmentPath: () => ({ id: python, path: python }),
      resolveEnvironment: async () => ({ executable: { uri: vscode.Uri.file(python) } }),
      onDidChangeActiveEnvironmentPath: changed.event,
    },
  };
};
