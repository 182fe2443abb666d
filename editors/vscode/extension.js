// VS Code → `plait lsp`: starts the plait language server over stdio for .plait files and restarts it when
// its settings change. Highlighting is the TextMate grammar's (package.json); everything else is the server's.
"use strict";

const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");
const { serverCommand } = require("./server");

/** @type {LanguageClient | undefined} */
let client;

function newClient() {
  const settings = vscode.workspace.getConfiguration("plait");
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const { command, args } = serverCommand({ path: settings.get("path"), args: settings.get("args") }, folder);
  // No `transport`: the client then speaks over the process's stdin/stdout without adding `--stdio`.
  const serverOptions = { command, args, options: { cwd: folder } };
  const clientOptions = {
    documentSelector: [{ scheme: "file", language: "plait" }],
    // Imported specs are read from disk, so saving one is what makes the others re-check against it.
    synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher("**/*.plait") },
  };
  return new LanguageClient("plait", "plait", serverOptions, clientOptions);
}

async function start() {
  client = newClient();
  try {
    await client.start();
  } catch (error) {
    const failed = client;
    client = undefined;
    await failed.dispose().catch(() => undefined);
    const message = error instanceof Error ? error.message : String(error);
    vscode.window.showErrorMessage(
      `plait: the language server did not start (${message}). Install it with \`pip install 'plait[lsp]'\`, ` +
        "or point the `plait.path` setting at the plait executable.",
    );
  }
}

async function restart() {
  if (client !== undefined) {
    const old = client;
    client = undefined;
    await old.stop().catch(() => undefined);
  }
  await start();
}

/** @param {vscode.ExtensionContext} context */
async function activate(context) {
  context.subscriptions.push(
    vscode.commands.registerCommand("plait.restartServer", restart),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration("plait.path") || event.affectsConfiguration("plait.args")) {
        restart();
      }
    }),
  );
  await start();
}

function deactivate() {
  return client === undefined ? undefined : client.stop();
}

module.exports = { activate, deactivate };
