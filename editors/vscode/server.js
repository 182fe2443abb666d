// Settings → the command that starts `plait lsp`. Kept apart from extension.js (and free of the `vscode`
// module) so that node can test it on its own.
"use strict";

const os = require("os");
const path = require("path");

/**
 * The executable and arguments for the language server.
 * @param {{path?: string, args?: string[]}} settings the `plait.*` settings
 * @param {string | undefined} workspaceFolder the first workspace folder's path, if any
 * @returns {{command: string, args: string[]}}
 */
function serverCommand(settings, workspaceFolder) {
  let command = (settings.path || "plait").trim() || "plait";
  // VS Code does not expand variables in settings; these two are what users write for a project's venv.
  if (workspaceFolder !== undefined) {
    command = command.split("${workspaceFolder}").join(workspaceFolder);
  }
  if (command === "~" || command.startsWith("~/")) {
    command = path.join(os.homedir(), command.slice(1));
  }
  const args = Array.isArray(settings.args) ? settings.args.map(String) : ["lsp"];
  return { command, args };
}

module.exports = { serverCommand };
