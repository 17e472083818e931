// The VS Code recipe of docs/protocol.md ("Who may connect"), without VS Code itself.
//
// vscode-languageclient, given a `serverOptions` function that resolves to a StreamInfo
// `{reader: socket, writer: socket}`, wraps the socket in vscode-jsonrpc's StreamMessageReader and
// StreamMessageWriter. This script does exactly that with the extension's own vscode-jsonrpc, then
// sends initialize with the token in initializationOptions, as the extension's clientOptions would.
//
//   node vscode_socket_client.js tcp PORT TOKEN_FILE STORE CWD
//   node vscode_socket_client.js unix SOCKET_PATH "" STORE CWD
//
// Prints one JSON object on stdout.
'use strict';
const fs = require('fs');
const net = require('net');
const path = require('path');

const extension = process.env.DSH_EXTENSION_DIR;
const rpc = require(path.join(extension, 'node_modules', 'vscode-jsonrpc', 'node'));

function serverOptions(mode, target) {
    return () => new Promise((resolve, reject) => {
        const socket = mode === 'tcp' ? net.connect(Number(target), '127.0.0.1') : net.connect(target);
        socket.once('connect', () => resolve({ reader: socket, writer: socket }));
        socket.once('error', reject);
    });
}

async function main() {
    const [mode, target, tokenFile, store, cwd] = process.argv.slice(2);
    const streams = await serverOptions(mode, target)();
    const closed = new Promise((resolve) => streams.reader.once('close', () => resolve(true)));
    const connection = rpc.createMessageConnection(
        new rpc.StreamMessageReader(streams.reader),
        new rpc.StreamMessageWriter(streams.writer),
    );
    connection.onError(() => undefined);
    connection.listen();
    const initializationOptions = { store: { path: store } };
    if (tokenFile) {
        initializationOptions.authToken = fs.readFileSync(tokenFile, 'utf8').trim();
    }
    if (process.env.DSH_WRONG_TOKEN) {
        initializationOptions.authToken = process.env.DSH_WRONG_TOKEN;
    }
    const out = {};
    try {
        const init = await connection.sendRequest('initialize', {
            processId: process.pid, rootUri: null, capabilities: {}, initializationOptions,
        });
        out.protocolVersion = init.capabilities.experimental.dsh.protocolVersion;
    } catch (error) {
        out.initializeError = { code: error.code, message: error.message, data: error.data };
    }
    if (out.initializeError === undefined) {
        await connection.sendNotification('initialized', {});
        const opened = await connection.sendRequest('dsh/session/open', { cwd, sessionId: `vscode-${mode}` });
        out.sessionId = opened.session.id;
        out.preview = (await connection.sendRequest('dsh/context/preview', { cwd })).text;
        await connection.sendRequest('shutdown');
        await connection.sendNotification('exit');
    }
    // After exit, or after a refusal, the server closes this connection (and only this one).
    const timeout = new Promise((resolve) => setTimeout(() => resolve(false), 30000));
    out.closedByServer = await Promise.race([closed, timeout]);
    process.stdout.write(JSON.stringify(out) + '\n');
    connection.dispose();
    process.exit(0);
}

main().catch((error) => {
    process.stderr.write(String(error && error.stack || error) + '\n');
    process.exit(1);
});
