// editors/plait.tmLanguage.json → syntaxes/: the grammar has one home outside the extension (other editors use
// it too), and a .vsix holds only files inside the extension's folder. Run by `npm ci` and before `vsce package`.
"use strict";

const fs = require("fs");
const path = require("path");

const source = path.join(__dirname, "..", "plait.tmLanguage.json");
const target = path.join(__dirname, "syntaxes", "plait.tmLanguage.json");
fs.mkdirSync(path.dirname(target), { recursive: true });
fs.copyFileSync(source, target);
