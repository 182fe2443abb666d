// plait studio: the served specs, their runs and a run's graph, timeline and decisions, over plait serve's HTTP API.
// Everything a run produced (inputs, model text, tool results, questions) reaches the page through textContent;
// the only markup the page parses is the spec's SVG drawing, from this server, with scripts and handlers removed.
'use strict';

const TOKEN_KEY = 'plait-serve-token';
const TERMINAL = new Set(['done', 'error', 'cancelled', 'max_steps']);
const state = {specs: [], spec: null, entry: null, run: null, view: null, stream: null, lastSeq: 0, timer: null};

// ---- small DOM helpers: every text goes in as textContent -------------------------------------------------------
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k in e && k !== 'list') e[k] = v;
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid === null || kid === undefined || kid === false) continue;
    e.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return e;
}
const $ = sel => document.querySelector(sel);
const show = v => (typeof v === 'string' ? v : JSON.stringify(v, null, 2));
const pill = status => el('span', {class: 'pill ' + status}, status);
function when(v) {
  if (v === null || v === undefined || v === '') return '';
  const d = new Date(typeof v === 'number' ? v * 1000 : v);
  if (isNaN(d)) return String(v);
  // Today's runs by their time alone: the list stays one line at 1280 pixels.
  const today = d.toDateString() === new Date().toDateString();
  return today ? d.toLocaleTimeString([], {hour: '2-digit', minute: '2-digit', second: '2-digit'})
    : d.toLocaleString([], {dateStyle: 'medium', timeStyle: 'short'});
}
const cost = c => (c === null || c === undefined ? null : '$' + Number(c).toFixed(c < 0.01 ? 5 : 4));
const tokens = t => (t ? (t.input || 0) + (t.output || 0) : 0);

// ---- the API: a bearer token from sessionStorage, asked for once when the server answers 401 -------------------
let asking = null;
function askToken(message) {
  if (asking) return asking;
  const dialog = $('#token-dialog'), input = $('#token-input');
  $('#token-error').textContent = message || '';
  input.value = '';
  asking = new Promise(resolve => {
    $('#token-form').onsubmit = () => {
      sessionStorage.setItem(TOKEN_KEY, input.value.trim());
      asking = null;
      resolve();
    };
  });
  if (!dialog.open) dialog.showModal();
  return asking;
}
// Nothing works without the token: Escape does not close the question.
$('#token-dialog').addEventListener('cancel', e => e.preventDefault());
function headers(extra) {
  const h = Object.assign({}, extra || {});
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) h.Authorization = 'Bearer ' + token;
  return h;
}
async function request(path, options) {
  options = options || {};
  for (;;) {
    // Relative to the page, so a proxy that serves the studio under a prefix (/plait/) reaches the same API.
    const r = await fetch(path.replace(/^\//, ''), Object.assign({}, options, {headers: headers(options.headers)}));
    if (r.status !== 401) return r;
    const had = sessionStorage.getItem(TOKEN_KEY);
    await askToken(had ? 'The server refused that token.' : '');
  }
}
async function api(path, options) {
  const r = await request(path, options);
  const type = r.headers.get('content-type') || '';
  const body = type.includes('json') ? await r.json() : await r.text();
  if (!r.ok) throw new Error((body && body.error) || (typeof body === 'string' && body) || r.status + ' ' + r.statusText);
  return body;
}
const post = (path, body) =>
  api(path, {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(body)});

// ---- forms from JSON Schemas --------------------------------------------------------------------------------------
// Each field is {node, read()}; read() returns the value or throws an Error naming the field (and marks it).
function plain(schema) {
  // An optional field may come as anyOf/oneOf [T, null]: the form asks for T and sends nothing when left empty.
  const alts = schema && (schema.anyOf || schema.oneOf);
  if (alts) {
    const real = alts.filter(s => s.type !== 'null');
    if (real.length === 1) return Object.assign({}, schema, real[0], {anyOf: undefined, oneOf: undefined});
  }
  if (schema && Array.isArray(schema.type)) {
    const real = schema.type.filter(t => t !== 'null');
    if (real.length === 1) return Object.assign({}, schema, {type: real[0]});
  }
  return schema || {};
}
function fail(input, label, message) {
  if (input) input.classList.add('invalid');
  throw new Error(label + ': ' + message);
}
function field(rawSchema, label, required, opts) {
  const schema = plain(rawSchema);
  const id = 'f' + Math.random().toString(36).slice(2, 9);
  const hint = schema.description ? el('span', {class: 'hint'}, ' ' + schema.description) : null;
  const title = el('label', {htmlFor: id}, label, required ? '' : el('span', {class: 'hint'}, ' (optional)'), hint);
  const clear = e => e.target.classList.remove('invalid');
  const has = v => v !== undefined;
  if (Array.isArray(schema.enum)) {
    const select = el('select', {id, name: label, oninput: clear},
      required && schema.enum.length ? null : el('option', {value: ''}, '—'),
      schema.enum.map((v, i) => el('option', {value: String(i)}, typeof v === 'string' ? v : JSON.stringify(v))));
    if (has(schema.default)) select.value = String(schema.enum.findIndex(v => v === schema.default));
    return {node: el('div', {class: 'field'}, title, select), read() {
      if (select.value === '') { if (required) fail(select, label, 'choose one'); return undefined; }
      return schema.enum[Number(select.value)];
    }};
  }
  if (schema.type === 'boolean') {
    const box = el('input', {type: 'checkbox', id, name: label, checked: schema.default === true});
    return {node: el('div', {class: 'field check'}, box, title), read: () => box.checked};
  }
  if (schema.type === 'number' || schema.type === 'integer') {
    const int = schema.type === 'integer';
    const input = el('input', {type: 'number', id, name: label, step: int ? '1' : 'any', oninput: clear,
      min: schema.minimum, max: schema.maximum, value: has(schema.default) ? String(schema.default) : ''});
    return {node: el('div', {class: 'field'}, title, input), read() {
      const text = input.value.trim();
      if (text === '' && !input.validity.badInput) { if (required) fail(input, label, 'a number is needed'); return undefined; }
      const n = Number(text);
      if (input.validity.badInput || text === '' || !isFinite(n)) fail(input, label, 'not a number');
      if (int && !Number.isInteger(n)) fail(input, label, 'a whole number is needed');
      if (has(schema.minimum) && n < schema.minimum) fail(input, label, 'at least ' + schema.minimum);
      if (has(schema.maximum) && n > schema.maximum) fail(input, label, 'at most ' + schema.maximum);
      return n;
    }};
  }
  if (schema.type === 'object' && schema.properties) return objectField(schema, label, required, opts);
  if (recordsOf(schema)) return unionField(schema, label, required, opts);
  if (schema.type === 'array') return arrayField(schema, label, required);
  if (schema.type === 'string' || (opts && opts.text)) {
    const long = (opts && opts.text) || (schema.maxLength || 0) > 200 || /\n/.test(schema.default || '');
    const input = long
      ? el('textarea', {id, name: label, rows: 4, oninput: clear})
      : el('input', {type: 'text', id, name: label, oninput: clear, autocomplete: 'off'});
    if (has(schema.default)) input.value = schema.default;
    return {node: el('div', {class: 'field'}, title, input), read() {
      if (input.value === '') { if (required) fail(input, label, 'is required'); return undefined; }
      return input.value;
    }};
  }
  // Anything else (a union, a free object): JSON in a textarea, parsed before sending.
  const area = el('textarea', {id, name: label, rows: 3, oninput: clear, placeholder: 'JSON'});
  if (has(schema.default)) area.value = JSON.stringify(schema.default);
  return {node: el('div', {class: 'field'}, title, area), read() {
    if (area.value.trim() === '') { if (required) fail(area, label, 'is required'); return undefined; }
    try { return JSON.parse(area.value); } catch (e) { return fail(area, label, 'not valid JSON'); }
  }};
}
function objectField(schema, label, required, opts) {
  const need = new Set(schema.required || []);
  const kids = Object.entries(schema.properties).map(([k, s]) => [k, field(s, k, need.has(k))]);
  const body = kids.map(([, f]) => f.node);
  const node = opts && opts.top ? el('div', {class: 'fields'}, body) : el('fieldset', {}, el('legend', {}, label), body);
  return {node, read() {
    const out = {};
    for (const [k, f] of kids) {
      const v = f.read();
      if (v !== undefined) out[k] = v;
    }
    return out;
  }};
}
// A union of records (`type Booking = Flight | Hotel`): [[label, record], ...] named by their types (else by the
// literal of the field that tells them apart); null for any other schema.
function recordsOf(schema) {
  const options = schema.anyOf || schema.oneOf;
  if (!Array.isArray(options) || options.length < 2) return null;
  if (!options.every(o => o && o.type === 'object' && o.properties)) return null;
  let labels = options.map(o => o.title);
  if (!labels.every(Boolean) || new Set(labels).size !== labels.length) {
    const fixed = o => Object.keys(o.properties).filter(k => (o.properties[k].enum || []).length === 1);
    const key = fixed(options[0]).find(k => options.every(o => fixed(o).includes(k)));
    if (!key) return null;
    labels = options.map(o => String(o.properties[key].enum[0]));
  }
  return options.map((o, i) => [labels[i], o]);
}
// Which record, then that record's fields; a field with one possible value (its discriminator) is sent, not asked.
function unionField(schema, label, required, opts) {
  const records = recordsOf(schema);
  const id = 'f' + Math.random().toString(36).slice(2, 9);
  const select = el('select', {id, name: label + '.record'},
    required ? null : el('option', {value: ''}, '—'),
    records.map(([name], i) => el('option', {value: String(i)}, name)));
  const body = el('div', {class: 'fields'});
  let current = null;
  const choose = () => {
    const record = records[Number(select.value)];
    if (select.value === '' || !record) { current = null; body.replaceChildren(); return; }
    const fixed = {}, shown = {};
    for (const [k, s] of Object.entries(record[1].properties)) {
      if ((s.enum || []).length === 1 && (record[1].required || []).includes(k)) fixed[k] = s.enum[0];
      else shown[k] = s;
    }
    const inner = objectField(Object.assign({}, record[1], {properties: shown}), record[0], true, {top: true});
    current = {fixed, inner};
    body.replaceChildren(inner.node);
  };
  select.addEventListener('input', choose);
  choose();
  const title = el('label', {htmlFor: id}, label === 'value' ? 'which' : label);
  const node = el(opts && opts.top ? 'div' : 'fieldset', {class: 'union'},
    opts && opts.top ? null : el('legend', {}, label), el('div', {class: 'field'}, title, select), body);
  return {node, read() {
    if (!current) { if (required) fail(select, label, 'choose one'); return undefined; }
    return Object.assign({}, current.fixed, current.inner.read());
  }};
}
function arrayField(schema, label, required) {
  const items = [];
  const list = el('div', {class: 'items'});
  const add = () => {
    const f = field(schema.items || {}, label + '[' + items.length + ']', true);
    const row = el('div', {class: 'item'}, f.node);
    const entry = {f, row};
    row.append(el('button', {type: 'button', class: 'ghost', title: 'remove', onclick() {
      items.splice(items.indexOf(entry), 1); row.remove();
    }}, '×'));
    items.push(entry);
    list.append(row);
  };
  const node = el('fieldset', {}, el('legend', {}, label, required ? '' : el('span', {class: 'hint'}, ' (optional)')),
    list, el('div', {}, el('button', {type: 'button', onclick: add}, '+ add')));
  return {node, read() {
    const out = items.map(i => i.f.read());
    if (required && schema.minItems && out.length < schema.minItems) throw new Error(label + ': at least ' + schema.minItems);
    return out;
  }};
}
// A form for a whole schema: an object's fields at the top level, plain text (no schema) as a textarea.
function schemaForm(schema, submitLabel, onValue, extraButtons) {
  const top = schema ? field(schema, 'value', true, {top: true}) : field(null, 'input', true, {text: true});
  const error = el('p', {class: 'error', role: 'alert'});
  const go = el('button', {type: 'submit', class: 'primary'}, submitLabel);
  const form = el('form', {class: 'schema', novalidate: true}, top.node, error,
    el('div', {class: 'actions'}, go, extraButtons || []));
  form.addEventListener('submit', async e => {
    e.preventDefault();
    error.textContent = '';
    let value;
    try { value = top.read(); } catch (err) { error.textContent = err.message; return; }
    go.disabled = true;
    try { await onValue(value); } catch (err) { error.textContent = err.message; } finally { go.disabled = false; }
  });
  return form;
}

// ---- the graph: the spec's SVG, fitted, zoomed and panned as `plait render --format html` does -------------------
const canvas = $('#canvas');
let view = null;  // {svg, whole, box}
function shaped(b) {
  const r = canvas.getBoundingClientRect(), a = r.width / r.height;
  if (!(a > 0)) return b;
  const [x, y, w, h] = b;
  return w / h < a ? [x - (h * a - w) / 2, y, h * a, h] : [x, y - (w / a - h) / 2, w, w / a];
}
const applyBox = () => view && view.svg.setAttribute('viewBox', view.box.join(' '));
// A small drawing is shown at its own size, centred, rather than blown up to the pane; a large one is fitted.
function fit() {
  if (!view) return;
  const r = canvas.getBoundingClientRect(), o = view.whole;
  if (o[2] <= r.width * 0.75 && o[3] <= r.height * 0.75) { actual(); return; }
  view.box = shaped(o.slice());
  applyBox();
}
function zoom(f, fx, fy) {
  if (!view) return;
  const b = view.box, w = b[2] * f, h = b[3] * f;
  view.box = [b[0] + (b[2] - w) * fx, b[1] + (b[3] - h) * fy, w, h];
  applyBox();
}
function actual() {
  if (!view) return;
  const r = canvas.getBoundingClientRect(), w = r.width * 0.75, h = r.height * 0.75, o = view.whole;
  view.box = [o[0] + (o[2] - w) / 2, o[1] + (o[3] - h) / 2, w, h];
  applyBox();
}
canvas.addEventListener('wheel', e => {
  if (!view) return;
  e.preventDefault();
  const r = canvas.getBoundingClientRect();
  zoom(e.deltaY > 0 ? 1.15 : 1 / 1.15, (e.clientX - r.left) / r.width, (e.clientY - r.top) / r.height);
}, {passive: false});
let from = null;
canvas.addEventListener('pointerdown', e => { from = [e.clientX, e.clientY]; canvas.classList.add('drag'); });
window.addEventListener('pointerup', () => { from = null; canvas.classList.remove('drag'); });
window.addEventListener('pointermove', e => {
  if (!from || !view) return;
  const unit = view.box[2] / canvas.getBoundingClientRect().width;
  view.box[0] -= (e.clientX - from[0]) * unit; view.box[1] -= (e.clientY - from[1]) * unit;
  from = [e.clientX, e.clientY]; applyBox();
});
window.addEventListener('resize', fit);
const zoomAct = {fit, actual, in: () => zoom(1 / 1.25, 0.5, 0.5), out: () => zoom(1.25, 0.5, 0.5)};
document.querySelectorAll('#zoom button').forEach(b => b.addEventListener('click', () => zoomAct[b.dataset.zoom]()));
window.addEventListener('keydown', e => {
  if (['INPUT', 'TEXTAREA', 'SELECT'].includes(e.target.tagName)) return;
  const k = {'+': 'in', '=': 'in', '-': 'out', '0': 'fit'}[e.key];
  if (k) zoomAct[k]();
});

// The drawing is parsed as SVG (never as HTML) and stripped of anything active before it joins the page.
function cleanSvg(text) {
  const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
  const svg = doc.documentElement;
  if (!svg || svg.nodeName !== 'svg' || doc.querySelector('parsererror')) return null;
  doc.querySelectorAll('script, foreignObject, iframe, object, embed').forEach(n => n.remove());
  for (const n of doc.querySelectorAll('*')) {
    for (const a of Array.from(n.attributes)) {
      const bad = a.name.toLowerCase().startsWith('on') ||
        (/href$/i.test(a.name) && /^\s*javascript:/i.test(a.value));
      if (bad) n.removeAttribute(a.name);
    }
  }
  svg.removeAttribute('width');
  svg.removeAttribute('height');
  svg.setAttribute('preserveAspectRatio', 'xMidYMid meet');
  return document.importNode(svg, true);
}
async function loadGraph(spec) {
  view = null;
  canvas.replaceChildren(el('p', {class: 'muted pad'}, 'Drawing ' + spec + '…'));
  let r;
  try { r = await request('/specs/' + encodeURIComponent(spec) + '/graph.svg'); } catch (e) {
    canvas.replaceChildren(el('p', {class: 'error pad'}, 'The drawing could not be loaded: ' + e.message)); return;
  }
  const text = await r.text();
  if (state.spec !== spec) return;
  if (!r.ok) {
    let message = text;
    try { message = JSON.parse(text).error || text; } catch (e) { /* plain text */ }
    canvas.replaceChildren(el('p', {class: 'error pad'}, 'No drawing: ' + message)); return;
  }
  const svg = cleanSvg(text);
  if (!svg) { canvas.replaceChildren(el('p', {class: 'error pad'}, 'The drawing is not an SVG.')); return; }
  canvas.replaceChildren(svg);
  const whole = (svg.getAttribute('viewBox') || '0 0 100 100').split(/[ ,]+/).map(Number);
  view = {svg, whole, box: whole.slice()};
  fit();
  remark();
}

// ---- where the run is: nodes it went through, the node running now, the node waiting for a person --------------
const marks = {visited: new Set(), active: null, waiting: null};
function nodeOf(path) {
  // path[-1] names the node; a nested position (a branch, a tool) falls back to the nearest drawn ancestor.
  // A call's position reads `agent:model-step-call` and a model request's `agent#step`: the agent is the node.
  for (let i = (path || []).length - 1; i >= 0; i--) {
    for (const id of [path[i], String(path[i]).split(/[:#]/)[0]]) {
      if (document.getElementById('plait:' + id)) return id;
    }
  }
  return null;
}
function paintGraph() {
  if (!view) return;
  view.svg.querySelectorAll('g.node').forEach(g => {
    const id = g.id.startsWith('plait:') ? g.id.slice(6) : null;
    g.classList.toggle('visited', marks.visited.has(id));
    g.classList.toggle('active', id !== null && id === marks.active);
    g.classList.toggle('waiting', id !== null && id === marks.waiting);
  });
}
function resetMarks() { seen = []; remark(); }
// Events are kept for the run shown, so a drawing that arrives after them (or is drawn again) is marked from all.
let seen = [];
function onEvent(ev) {
  seen.push(ev);
  mark(ev);
  paintGraph();
}
function remark() {
  marks.visited = new Set(); marks.active = null; marks.waiting = null;
  seen.forEach(mark);
  if (state.view) waitingFromView(state.view);
  paintGraph();
}
function mark(ev) {
  const node = nodeOf(ev.path);
  const type = ev.type;
  if (/_start$/.test(type) && type !== 'run_start' && node) {
    if (marks.active && marks.active !== node) marks.visited.add(marks.active);
    marks.active = node; marks.waiting = null;
  } else if (/_end$/.test(type) && type !== 'run_end' && node) {
    marks.visited.add(node);
    if (marks.active === node) marks.active = null;
  } else if ((type === 'interrupt' || type === 'ask' || type === 'pause') && node) {
    marks.waiting = node;
    if (marks.active === node) marks.active = null;
  } else if (type === 'ask_answered' || type === 'decision' || type === 'run_resume') {
    if (marks.waiting) marks.visited.add(marks.waiting);
    if (node && type === 'ask_answered') marks.visited.add(node);
    marks.waiting = null;
  } else if (type === 'run_end') {
    if (marks.active) marks.visited.add(marks.active);
    marks.active = null;
    // A run that stops for a person ends this leg with what it waits for: that node waits.
    const pending = (ev.data && ev.data.pending) || [];
    marks.waiting = pending.length ? nodeOf(pending[0].path || String(pending[0].id).split('/')) : null;
  }
}

// ---- the event stream: fetch (EventSource cannot send the bearer token), resumed with Last-Event-ID -------------
let retry = 1000;
function closeStream() {
  if (state.stream) { state.stream.abort(); state.stream = null; }
}
async function follow(runId) {
  closeStream();
  const ctrl = new AbortController();
  state.stream = ctrl;
  $('#conn').textContent = '● live';
  try {
    const r = await request('/runs/' + encodeURIComponent(runId) + '/events', {
      signal: ctrl.signal, headers: state.lastSeq ? {'Last-Event-ID': String(state.lastSeq)} : {}});
    if (!r.ok || !r.body) throw new Error('events: ' + r.status);
    const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const {value, done} = await reader.read();
      if (done) break;
      buffer += value.replace(/\r\n?/g, '\n');
      let cut;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const data = block.split('\n').filter(l => l.startsWith('data:')).map(l => l.slice(5).replace(/^ /, ''));
        if (!data.length) continue;
        let ev;
        try { ev = JSON.parse(data.join('\n')); } catch (e) { continue; }
        if (state.run !== runId) return;
        if (typeof ev.seq === 'number') {
          if (ev.seq <= state.lastSeq) continue;
          state.lastSeq = ev.seq;
        }
        onEvent(ev);
        soon();
      }
    }
    retry = 1000;
  } catch (e) {
    if (e.name === 'AbortError') return;
  } finally {
    if (state.stream === ctrl) { state.stream = null; $('#conn').textContent = ''; }
  }
  if (state.run !== runId) return;
  await refreshRun();
  // A stream cut before the run finished (a restart, a proxy's timeout): read on from the last event seen.
  if (state.run === runId && !state.stream && state.view && !TERMINAL.has(state.view.status)) {
    if (!$('#conn').textContent) $('#conn').textContent = 'reconnecting…';
    retry = Math.min(retry * 2, 15000);
    setTimeout(() => { if (state.run === runId && !state.stream) follow(runId); }, retry);
  }
}
// Many events arrive together: the run, its timeline and the list are fetched again once they settle.
function soon() {
  clearTimeout(state.timer);
  state.timer = setTimeout(() => { refreshRun(); loadRuns(); }, 150);
}

// ---- specs and runs -------------------------------------------------------------------------------------------
async function loadSpecs() {
  try { state.specs = await api('/specs'); } catch (e) {
    $('#specs').replaceChildren(el('li', {class: 'error'}, e.message)); return;
  }
  $('#specs').replaceChildren(...(state.specs.length ? state.specs.map(s => el('li', {},
    el('button', {class: state.spec === s.name ? 'sel' : '', dataset: {spec: s.name}, onclick: () => go(s.name, null)},
      el('span', {class: 'name'}, s.name),
      el('span', {class: 'sub'}, s.entries.map(e => e.name).join(' · ') || 'no entries'))))
    : [el('li', {class: 'empty'}, 'No specs served.')]));
}
async function loadRuns() {
  if (!state.spec) { $('#runs').replaceChildren(); return; }
  let runs;
  try { runs = await api('/runs?spec=' + encodeURIComponent(state.spec)); } catch (e) {
    $('#runs').replaceChildren(el('li', {class: 'error'}, e.message)); return;
  }
  $('#runs').replaceChildren(...(runs.length ? runs.map(r => el('li', {},
    el('button', {class: state.run === r.id ? 'sel' : '', title: r.id, dataset: {run: r.id}, onclick: () => go(r.spec, r.id)},
      el('span', {class: 'row'}, pill(r.status), el('span', {class: 'mono'}, r.id)),
      el('span', {class: 'sub'}, [r.entry, when(r.started), tokens(r.tokens) + ' tokens', cost(r.cost)]
        .filter(Boolean).join(' · ')))))
    : [el('li', {class: 'empty'}, 'No runs yet.')]));
}

// ---- the right-hand panel: start a run, or a run's state, its pending decisions and its timeline --------------
function startPanel() {
  const spec = state.specs.find(s => s.name === state.spec);
  if (!spec) {
    $('#panel').replaceChildren(el('p', {class: 'muted'}, state.spec ? 'No served spec is named ' + state.spec + '.' : 'No specs served.'));
    return;
  }
  const entry = spec.entries.find(e => e.name === state.entry) || spec.entries[0];
  const card = el('div', {class: 'card', id: 'start'});
  card.append(el('div', {class: 'head'}, el('h3', {}, 'Start a run')));
  if (!entry) { card.append(el('p', {class: 'muted'}, 'This spec has no entry.')); $('#panel').replaceChildren(card); return; }
  if (spec.entries.length > 1) {
    const pick = el('select', {name: 'entry', onchange: () => { state.entry = pick.value; startPanel(); }},
      spec.entries.map(e => el('option', {value: e.name, selected: e.name === entry.name}, e.name)));
    card.append(el('div', {class: 'field'}, el('label', {}, 'entry'), pick));
  }
  if (entry.description) card.append(el('p', {class: 'muted'}, entry.description));
  card.append(schemaForm(entry.input_schema, 'Start run', async input => {
    const run = await post('/runs', {spec: spec.name, entry: entry.name, input});
    go(spec.name, run.id);
  }));
  $('#panel').replaceChildren(card);
}
function decisionCard(p, runId) {
  const send = async d => {
    const v = await post('/runs/' + encodeURIComponent(runId) + '/decisions', {decisions: [Object.assign({id: p.id}, d)]});
    state.view = v; renderRun(); follow(runId);
  };
  const card = el('div', {class: 'card attn pending', dataset: {kind: p.kind, id: p.id}});
  if (p.kind === 'ask') {
    card.append(el('div', {class: 'head'}, el('span', {class: 'pill waiting'}, 'question'), el('h3', {}, p.name || p.id)),
      el('p', {class: 'text question'}, p.question || ''),
      schemaForm(p.answer_schema || null, 'Answer', answer => send({action: 'answer', answer})));
    return card;
  }
  if (p.kind === 'approval') {
    const args = el('pre', {class: 'text arguments'}, show(p.arguments || {}));
    const reason = el('input', {type: 'text', name: 'reason', placeholder: 'why (optional, the model reads it)'});
    const area = el('textarea', {name: 'arguments', rows: 6});
    area.value = JSON.stringify(p.arguments || {}, null, 2);
    const error = el('p', {class: 'error', role: 'alert'});
    const edit = el('div', {class: 'field edit', hidden: true}, el('label', {}, 'arguments (JSON)'), area);
    const act = async (fn, button) => {
      error.textContent = '';
      let d;
      try { d = fn(); } catch (e) { error.textContent = e.message; return; }
      button.disabled = true;
      try { await send(d); } catch (e) { error.textContent = e.message; } finally { button.disabled = false; }
    };
    const editArgs = () => {
      let value;
      try { value = JSON.parse(area.value); } catch (e) { area.classList.add('invalid'); throw new Error('arguments: not valid JSON (' + e.message + ')'); }
      if (!value || typeof value !== 'object' || Array.isArray(value)) { area.classList.add('invalid'); throw new Error('arguments: a JSON object is needed'); }
      const schema = p.answer_schema;
      for (const k of (schema && schema.required) || []) if (!(k in value)) throw new Error('arguments: ' + k + ' is required');
      return {action: 'edit', arguments: value};
    };
    area.addEventListener('input', () => area.classList.remove('invalid'));
    const approve = el('button', {type: 'button', class: 'good', name: 'approve'}, 'Approve');
    // Approves this call, and every later call of the tool with the same arguments in this run.
    const same = el('button', {type: 'button', class: 'good', name: 'approve_same', title: 'also approve the same call again in this run'}, 'Approve same');
    const reject = el('button', {type: 'button', class: 'bad', name: 'reject'}, 'Reject');
    const editBtn = el('button', {type: 'button', name: 'edit'}, 'Edit…');
    approve.onclick = () => act(() => ({action: 'approve'}), approve);
    same.onclick = () => act(() => ({action: 'approve_same'}), same);
    reject.onclick = () => act(() => (reason.value ? {action: 'reject', reason: reason.value} : {action: 'reject'}), reject);
    editBtn.onclick = () => {
      if (edit.hidden) { edit.hidden = false; editBtn.textContent = 'Send edited'; return; }
      act(editArgs, editBtn);
    };
    card.append(el('div', {class: 'head'}, el('span', {class: 'pill waiting'}, 'approval'), el('h3', {}, p.name || 'call')),
      el('div', {class: 'muted mono'}, p.id), args, edit, el('div', {class: 'field'}, reason), error,
      el('div', {class: 'actions'}, approve, same, reject, editBtn));
    return card;
  }
  if (p.kind === 'budget') {
    const limits = p.limits || {};
    const spent = p.limit === 'usd' ? cost(p.spent) : p.spent + ' ' + (p.limit || '').replace('_', ' ');
    const limit = p.limit === 'usd' ? cost(limits.usd) : limits[p.limit];
    card.append(el('div', {class: 'head'}, el('span', {class: 'pill waiting'}, 'budget'), el('h3', {}, p.name || 'the run')),
      el('p', {class: 'muted'}, 'The next model call would go over the budget: ' + spent + ' spent of ' + limit +
        '. Give it new limits to go on.'),
      schemaForm(p.answer_schema || null, 'Raise budget', budget => send({action: 'raise_budget', budget})));
    return card;
  }
  // unknown_outcome (and any kind this page does not know): the choices the API takes.
  const error = el('p', {class: 'error', role: 'alert'});
  const choice = (action, label) => el('button', {type: 'button', name: action, async onclick(e) {
    error.textContent = ''; e.target.disabled = true;
    try { await send({action}); } catch (err) { error.textContent = err.message; } finally { e.target.disabled = false; }
  }}, label);
  const kind = p.kind === 'unknown_outcome' ? 'outcome unknown' : p.kind;
  card.append(el('div', {class: 'head'}, el('span', {class: 'pill waiting'}, kind), el('h3', {}, p.name || p.id)),
    el('p', {class: 'muted'}, 'The call may or may not have happened. Run it again, or skip it.'),
    p.arguments ? el('pre', {class: 'text'}, show(p.arguments)) : null, error,
    el('div', {class: 'actions'}, choice('retry', 'Run again'), choice('skip', 'Skip')));
  return card;
}
// Each loop decision a break ended gets the route decision whose case went to `break` (the latest before it: a break
// out of an outer loop ends each loop on the way, each of them credited to the same case).
function breaksOf(items) {
  let by = null;
  return items.map(i => {
    if (i.kind !== 'decision') return i;
    const d = i.decision || {};
    if (i.of === 'route' && d.leaves) by = {name: d.name || i.key, case: d.case};
    return i.of === 'loop' && d.exit === 'break' && by ? Object.assign({}, i, {by}) : i;
  });
}
function timelineItem(i) {
  const t = el('span', {class: 'tl-t'}, typeof i.t === 'number' ? '+' + i.t.toFixed(3) + 's' : '');
  const li = (cls, title, meta, ...body) => el('li', {class: cls + (i.status === 'error' ? ' failed' : '')},
    el('div', {class: 'tl-head'}, el('b', {}, title), t), meta ? el('div', {class: 'tl-meta'}, meta) : null,
    body.filter(Boolean).length ? el('div', {class: 'tl-body'}, body) : null);
  if (i.kind === 'model_call') {
    const meta = [i.model, i.latency_ms !== undefined && i.latency_ms !== null ? Math.round(i.latency_ms) + ' ms' : null,
      (i.input_tokens || 0) + ' in / ' + (i.output_tokens || 0) + ' out tokens', cost(i.cost_usd),
      i.finish_reason, i.status !== 'ok' ? i.status : null].filter(Boolean).join(' · ');
    return li('model_call', 'model · ' + (i.agent || i.position || ''), meta,
      i.text ? el('pre', {class: 'text'}, i.text) : null,
      i.tool_calls && i.tool_calls.length ? el('div', {}, 'calls ' + i.tool_calls.join(', ')) : null,
      i.error ? el('div', {class: 'error'}, (i.error.kind || '') + ': ' + (i.error.message || '')) : null);
  }
  if (i.kind === 'tool_call') {
    const meta = [i.status, i.latency_ms !== undefined && i.latency_ms !== null ? Math.round(i.latency_ms) + ' ms' : null,
      i.attempt > 1 ? 'attempt ' + i.attempt : null].filter(Boolean).join(' · ');
    return li('tool_call', 'tool · ' + (i.tool || ''), meta,
      i.arguments !== undefined ? el('pre', {class: 'text'}, show(i.arguments)) : null,
      i.result !== undefined && i.result !== null ? el('pre', {class: 'text result'}, '→ ' + show(i.result)) : null);
  }
  if (i.kind === 'decision') {
    const d = i.decision || {};
    let what = d.action || (d.answer !== undefined ? 'answered' : d.case !== undefined ? 'case ' + show(d.case)
      : d.items !== undefined ? 'new limits' : '');
    // A route case that goes to `break` (plait 0.3) runs nothing: it names the loop it leaves.
    if (i.of === 'route' && d.leaves) what += ' → break ' + d.leaves;
    const left = i.of === 'loop' && d.exit === 'break';
    if (i.of === 'loop') {
      // A loop left by a break: which route case left it (i.by, see breaksOf), and the outer loop it is on its way out of.
      what = ['iteration ' + d.iteration, left ? 'left by break' + (i.by ? ' at route ' + i.by.name + ', case ' + show(i.by.case) : '') : null,
        left && d.leaves ? 'on its way out of ' + d.leaves : null,
        !left && d.condition ? d.condition + ' is ' + d.holds : null].filter(Boolean).join(' · ');
    }
    // What was decided: an answer, edited arguments, a rejection's message, a route's target or value, a budget's limits.
    const detail = [d.answer, d.arguments, d.message, d.reason, d.target, d.value, d.items].find(x => x !== undefined && x !== null);
    return li('decision' + (left || d.leaves ? ' break' : ''), (i.of || 'decision') + ' · ' + (d.name || i.key || ''), what,
      detail !== undefined && detail !== null ? el('pre', {class: 'text'}, show(detail)) : null);
  }
  if (i.kind === 'admit') return li('admit', 'input', i.entry ? 'entry ' + i.entry : '', i.input !== undefined ? el('pre', {class: 'text'}, show(i.input)) : null);
  // Which process took the run up is the journal's business, not the reader's.
  if (i.kind === 'resume') return li('resume', 'resumed', null);
  if (i.kind === 'stop') return li('stop', 'stopped · ' + (i.stop_reason || ''), i.pending ? i.pending.length + ' pending' : '');
  const rest = Object.assign({}, i); delete rest.t; delete rest.seq; delete rest.kind;
  return li(i.kind, i.kind, null, Object.keys(rest).length ? el('pre', {class: 'text'}, show(rest)) : null);
}
async function refreshRun() {
  const runId = state.run;
  if (!runId) return;
  try {
    const v = await api('/runs/' + encodeURIComponent(runId));
    if (state.run !== runId) return;
    state.view = v;
  } catch (e) {
    // The server not answering (restarting, say) keeps what is shown; the stream's retries say so in the bar.
    if (e instanceof TypeError) { $('#conn').textContent = 'server not answering, retrying…'; return; }
    if (state.run === runId) $('#panel').replaceChildren(el('div', {class: 'card'}, el('p', {class: 'error'}, e.message)));
    return;
  }
  renderRun();
  try {
    const trace = await api('/runs/' + encodeURIComponent(runId) + '/trace');
    if (state.run !== runId) return;
    const items = trace.timeline || [];
    $('#timeline').replaceChildren(...(items.length ? breaksOf(items).map(timelineItem) : [el('li', {class: 'empty'}, 'Nothing yet.')]));
  } catch (e) {
    const tl = $('#timeline');
    if (tl) tl.replaceChildren(el('li', {class: 'error'}, 'timeline: ' + e.message));
  }
}
// A waiting run whose stop event has not come yet: the node its first pending item names waits.
function waitingFromView(v) {
  if (v.status !== 'waiting' || marks.waiting) return;
  for (const p of v.pending || []) { const n = nodeOf(p.path || String(p.id).split('/')); if (n) { marks.waiting = n; break; } }
}
function renderRun() {
  const v = state.view;
  if (!v) return;
  if (v.status === 'waiting' && !marks.waiting) { waitingFromView(v); paintGraph(); }
  // Keep a half-written answer: the panel is rebuilt only when what it shows changed.
  const key = JSON.stringify([v.id, v.status, v.pending, v.output, v.error, v.tokens, v.cost, v.ended]);
  if ($('#panel').dataset.key === key) return;
  const moved = $('#panel').dataset.status !== v.status;
  $('#panel').dataset.key = key;
  $('#panel').dataset.status = v.status;
  if (moved) loadRuns();  // the list shows the new status too
  const facts = [['entry', v.entry], ['started', when(v.started)], ['ended', TERMINAL.has(v.status) ? when(v.ended) : ''],
    ['tokens', (v.tokens ? v.tokens.input + ' in / ' + v.tokens.output + ' out' : '')], ['cost', cost(v.cost)],
    ['stop', v.stop_reason]].filter(([, x]) => x);
  const summary = el('div', {class: 'card', id: 'run'},
    el('div', {class: 'head'}, pill(v.status), el('h3', {class: 'mono', title: v.id}, v.id)),
    el('dl', {class: 'facts'}, facts.map(([k, x]) => [el('dt', {}, k), el('dd', {}, x)])),
    v.error ? el('p', {class: 'error'}, v.error) : null,
    el('div', {class: 'actions'},
      TERMINAL.has(v.status) ? null : el('button', {type: 'button', class: 'bad', name: 'cancel', async onclick(e) {
        e.target.disabled = true;
        try { state.view = await post('/runs/' + encodeURIComponent(v.id) + '/cancel', {}); renderRun(); } catch (err) {
          e.target.disabled = false;
          e.target.after(el('p', {class: 'error'}, err.message));
        }
      }}, 'Cancel run'),
      el('button', {type: 'button', name: 'new', onclick: () => go(v.spec, null)}, 'New run')));
  const parts = [summary, ...(v.pending || []).map(p => decisionCard(p, v.id))];
  if (v.output !== null && v.output !== undefined && v.status === 'done') {
    parts.push(el('div', {class: 'card', id: 'output'}, el('h2', {}, 'Output'), el('pre', {class: 'text'}, show(v.output))));
  }
  const old = $('#timeline');
  parts.push(el('div', {class: 'card'}, el('h2', {}, 'Timeline'), old || el('ol', {class: 'timeline', id: 'timeline'})));
  $('#panel').replaceChildren(...parts);
  $('#where').textContent = v.spec + ' › ' + v.id;
}

// ---- navigation: #spec=NAME&run=ID, so a reload or a shared link opens the same view -------------------------
function go(spec, run) {
  const h = new URLSearchParams();
  if (spec) h.set('spec', spec);
  if (run) h.set('run', run);
  location.hash = h.toString();
}
async function route() {
  const h = new URLSearchParams(location.hash.slice(1));
  const spec = h.get('spec') || (state.specs[0] && state.specs[0].name) || null;
  const run = h.get('run');
  if (spec !== state.spec) { state.spec = spec; state.entry = null; if (spec) loadGraph(spec); }
  if (run !== state.run) {
    closeStream(); state.run = run; state.view = null; state.lastSeq = 0; resetMarks();
    $('#panel').dataset.key = '';
  }
  loadSpecs();
  loadRuns();
  $('#where').textContent = spec ? spec + (run ? ' › ' + run : '') : '';
  if (!run) { startPanel(); return; }
  $('#panel').replaceChildren(el('p', {class: 'muted'}, 'Loading ' + run + '…'));
  await refreshRun();
  if (state.run === run) follow(run);
}
$('#refresh').addEventListener('click', loadRuns);
// Runs other clients start show up without a click; a hidden tab asks nothing.
setInterval(() => { if (!document.hidden && state.spec) loadRuns(); }, 5000);
window.addEventListener('hashchange', route);
loadSpecs().then(route);
