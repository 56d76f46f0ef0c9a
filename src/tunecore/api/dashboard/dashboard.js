// tunecore dashboard: one page, six tabs, fed by the server's JSON.
// Every text from the experiment (names, configs, metric names, errors) is
// set with textContent or as an SVG attribute value, never parsed as HTML.
'use strict';

const SVGNS = 'http://www.w3.org/2000/svg';
const PAGE_ROWS = 50;
const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e'];
const state = {tab: 'overview', version: -1, trials: null, sort: {column: null, desc: false},
  page: 0, selected: null, loaded: {}};

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (key === 'class') node.className = value;
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVGNS, tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = String(text);
  return node;
}

function shown(value) {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(5)));
  return String(value);
}

function when(seconds) {
  return seconds === null || seconds === undefined ? '-' : new Date(seconds * 1000).toLocaleTimeString();
}

async function getJson(path) {
  const response = await fetch(path, {cache: 'no-store'});
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

// ---- tabs and live updates ----

function showTab(name) {
  state.tab = name;
  for (const button of document.querySelectorAll('#tabs button')) {
    button.classList.toggle('active', button.dataset.tab === name);
  }
  for (const section of document.querySelectorAll('section.tab')) section.hidden = section.id !== name;
  refresh(true);
}

const RENDER = {overview: loadOverview, trials: loadTrials, curves: loadCurves,
  decisions: loadDecisions, params: loadParams, whatif: async () => {}};

async function refresh(force) {
  try {
    const version = await getJson('/api/version');
    const live = document.getElementById('live');
    live.textContent = version.read < version.size
      ? `reading the log: ${Math.floor(100 * version.read / version.size)}%`
      : (version.done ? 'finished' : 'live');
    live.className = 'live ' + (version.done ? 'done' : 'running');
    if (!force && version.version === state.version) return;
    state.version = version.version;
    await RENDER[state.tab]();
    document.body.dataset.version = String(version.version);
  } catch (error) {
    console.error(error);
    const live = document.getElementById('live');
    live.textContent = error instanceof TypeError && error.message.includes('fetch')
      ? 'connection lost' : 'error: ' + error.message;
    live.className = 'live lost';
  }
}

// ---- overview ----

async function loadOverview() {
  const data = await getJson('/api/overview');
  document.getElementById('title').textContent = 'tunecore: ' + data.name;
  document.title = 'tunecore: ' + data.name;
  const root = document.getElementById('overview');
  const cards = el('div', {class: 'cards'},
    el('div', {class: 'card'}, el('div', {}, 'trials'), el('div', {class: 'big', id: 'trial-count'}, data.trials)),
    ...Object.entries(data.counts).map(([status, count]) =>
      el('div', {class: 'card'}, el('div', {class: 'status-' + status}, status.toLowerCase()),
        el('div', {class: 'big'}, count))),
    el('div', {class: 'card'}, el('div', {}, 'events'), el('div', {class: 'big'}, data.events)));
  const best = data.best ? el('div', {class: 'card', id: 'best-trial'},
    el('div', {}, `best ${data.metric} (${data.mode})`),
    el('div', {class: 'big'}, shown(data.best.value)),
    el('div', {}, data.best.name),
    el('div', {}, Object.entries(data.best.config).map(([k, v]) => `${k}=${shown(v)}`).join(', ')))
    : el('div', {class: 'card'}, 'no result with the metric yet');
  const settings = el('dl', {class: 'settings'});
  const add = (key, value) => settings.append(el('dt', {}, key), el('dd', {}, value));
  add('location', data.location);
  add('metric', data.metric ? `${data.metric} (${data.mode})` : 'none');
  add('scheduler', data.scheduler);
  add('searcher', data.searcher || 'the search space (random or grid)');
  for (const [key, value] of Object.entries(data.settings)) {
    add(key, typeof value === 'object' && value !== null ? JSON.stringify(value) : shown(value));
  }
  add('started', when(data.started_at));
  add('last event', when(data.updated_at));
  if (data.stopping) add('stopping', data.stopping);
  const errors = data.errors.map(e => el('div', {class: 'error-box'},
    el('strong', {}, e.name), el('pre', {}, e.error)));
  root.replaceChildren(
    data.problem ? el('div', {class: 'problem'}, data.problem) : '',
    cards, el('h2', {}, 'Best so far'), best, bestChart(data),
    el('h2', {}, 'Settings'), settings,
    el('h2', {}, `Errors (${data.errors.length})`), ...errors,
    el('h2', {}, 'Scheduler'), el('pre', {}, data.scheduler_settings));
}

function bestChart(data) {
  const box = el('div', {class: 'chart', id: 'best-chart'});
  const points = data.best_over_time.filter(p => p[1] !== null);
  if (points.length === 0) return box;
  const last = Math.max(data.updated_at || 0, points[points.length - 1][0]);
  points.push([last, points[points.length - 1][1], points[points.length - 1][2]]);
  const plot = axes(box, points.map(p => p[0] - points[0][0]), points.map(p => p[1]), 760, 200,
    {xLabel: 'seconds since the first result', yLabel: data.metric});
  let d = '';
  points.forEach((p, i) => {
    const x = plot.x(p[0] - points[0][0]);
    const y = plot.y(p[1]);
    d += i === 0 ? `M${x} ${y}` : `H${x}V${y}`;
  });
  plot.svg.append(svg('path', {d, fill: 'none', stroke: PALETTE[0], 'stroke-width': 2}));
  return box;
}

// ---- shared chart axes ----

function axes(box, xs, ys, width, height, options) {
  const margin = {left: options.left || 64, right: 16, top: 10, bottom: 36};
  const log = options.log === true;
  const finite = v => v !== null && Number.isFinite(v) && (!log || v > 0);
  const xv = xs.filter(finite), yv = ys.filter(finite);
  let [x0, x1] = [Math.min(...xv), Math.max(...xv)];
  let [y0, y1] = [Math.min(...yv), Math.max(...yv)];
  if (!(x1 > x0)) { x0 -= 1; x1 += 1; }
  if (!(y1 > y0)) { y0 = log ? y0 / 2 : y0 - 1; y1 = log ? y1 * 2 : y1 + 1; }
  const ty = log ? Math.log10 : (v => v);
  const [ly0, ly1] = [ty(y0), ty(y1)];
  const plot = {
    x: v => margin.left + (v - x0) / (x1 - x0) * (width - margin.left - margin.right),
    y: v => margin.top + (1 - (ty(v) - ly0) / (ly1 - ly0)) * (height - margin.top - margin.bottom),
    svg: svg('svg', {width, height, viewBox: `0 0 ${width} ${height}`}),
    margin, width, height, x0, x1, y0, y1,
  };
  const axis = svg('g', {class: 'axis'});
  axis.append(svg('line', {x1: margin.left, y1: height - margin.bottom, x2: width - margin.right, y2: height - margin.bottom}));
  axis.append(svg('line', {x1: margin.left, y1: margin.top, x2: margin.left, y2: height - margin.bottom}));
  const xTicks = options.xTicks || [0, 1, 2, 3, 4].map(i => [x0 + (x1 - x0) * i / 4]);
  for (const [xv2, label] of xTicks) {
    axis.append(svg('text', {x: plot.x(xv2), y: height - margin.bottom + 14, 'text-anchor': 'middle'}, label ?? shown(xv2)));
  }
  const yTicks = options.yTicks || [0, 1, 2, 3, 4].map(i => [log ? 10 ** (ly0 + (ly1 - ly0) * i / 4) : y0 + (y1 - y0) * i / 4]);
  for (const [yv2, label] of yTicks) {
    axis.append(svg('text', {x: margin.left - 4, y: plot.y(yv2) + 4, 'text-anchor': 'end'}, label ?? shown(yv2)));
  }
  axis.append(svg('text', {x: (width + margin.left) / 2, y: height - 4, 'text-anchor': 'middle'}, options.xLabel || ''));
  axis.append(svg('text', {x: 12, y: (height - margin.bottom + margin.top) / 2, 'text-anchor': 'middle',
    transform: `rotate(-90 12 ${(height - margin.bottom + margin.top) / 2})`}, options.yLabel || ''));
  plot.svg.append(axis);
  box.replaceChildren(plot.svg);
  return plot;
}

// ---- trials table ----

async function loadTrials() {
  state.trials = await getJson('/api/trials');
  const statuses = new Set(state.trials.rows.map(r => r[2]));
  const select = document.getElementById('status-filter');
  const chosen = select.value;
  select.replaceChildren(el('option', {value: ''}, 'any status'),
    ...[...statuses].sort().map(s => el('option', {value: s}, s)));
  select.value = statuses.has(chosen) ? chosen : '';
  drawTable();
}

function tableColumns(data) {
  const m = data.metric || 'metric';
  return [
    {name: 'trial', get: r => r[1], text: true},
    {name: 'status', get: r => r[2], text: true},
    {name: 'iter', get: r => r[3]},
    {name: `last ${m}`, get: r => r[4]},
    {name: `best ${m}`, get: r => r[5]},
    {name: `last-5-avg ${m}`, get: r => r[6]},
    ...data.params.map((p, i) => ({name: p, get: r => r[7][i], text: true, key: p})),
    ...data.metrics.map((p, i) => ({name: p, get: r => r[8][i], key: p})),
  ];
}

function filtered(data, columns) {
  const text = document.getElementById('filter').value.trim();
  const status = document.getElementById('status-filter').value;
  const compare = text.match(/^([^<>=]+)\s*([<>=])\s*(.+)$/);
  return data.rows.filter(row => {
    if (status && row[2] !== status) return false;
    if (!text) return true;
    if (compare) {
      const column = columns.find(c => c.name === compare[1].trim() || c.key === compare[1].trim());
      if (!column) return false;
      const value = column.get(row);
      const wanted = Number(compare[3]);
      if (compare[2] === '=') return String(value) === compare[3].trim() || value === wanted;
      if (typeof value !== 'number' || Number.isNaN(wanted)) return false;
      return compare[2] === '<' ? value < wanted : value > wanted;
    }
    const needle = text.toLowerCase();
    return columns.some(c => String(c.get(row) ?? '').toLowerCase().includes(needle));
  });
}

function drawTable() {
  const data = state.trials;
  if (!data) return;
  const columns = tableColumns(data);
  let rows = filtered(data, columns);
  const sort = state.sort;
  const column = columns.find(c => c.name === sort.column);
  if (column) {
    const sign = sort.desc ? -1 : 1;
    rows = rows.slice().sort((a, b) => {
      const [x, y] = [column.get(a), column.get(b)];
      if (x === null || x === undefined) return (y === null || y === undefined) ? 0 : 1;
      if (y === null || y === undefined) return -1;
      return sign * (typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y)));
    });
  }
  const pages = Math.max(1, Math.ceil(rows.length / PAGE_ROWS));
  state.page = Math.min(state.page, pages - 1);
  const head = el('tr', {}, ...columns.map(c => el('th', {
    class: (c.text ? 'text ' : '') + (c.name === sort.column ? (sort.desc ? 'sorted-desc' : 'sorted-asc') : ''),
    dataset: {column: c.name},
    onclick: () => {
      state.sort = {column: c.name, desc: sort.column === c.name ? !sort.desc : false};
      state.page = 0;
      drawTable();
    }}, c.name)));
  const body = rows.slice(state.page * PAGE_ROWS, (state.page + 1) * PAGE_ROWS).map(row =>
    el('tr', {dataset: {trial: row[0]}, onclick: () => openTrial(row[0])},
      ...columns.map(c => el('td', {class: (c.text ? 'text ' : '') + (c.name === 'status' ? 'status-' + row[2] : '')}, shown(c.get(row))))));
  const table = document.getElementById('trial-table');
  table.tHead.replaceChildren(head);
  table.tBodies[0].replaceChildren(...body);
  document.getElementById('table-count').textContent = `${rows.length} of ${data.rows.length} trials`;
  document.getElementById('page-no').textContent = ` page ${state.page + 1} of ${pages} `;
}

function openTrial(trialId) {
  state.selected = trialId;
  showTab('decisions');
}

// ---- curves ----

async function loadCurves() {
  const metric = document.getElementById('curve-metric');
  const params = new URLSearchParams({
    trials: document.getElementById('curve-trials').value.replace(/\s+/g, ''),
    x: document.getElementById('curve-x').value,
    y: metric.value || '',
  });
  const data = await getJson('/api/curves?' + params);
  const current = metric.value;
  metric.replaceChildren(...data.metrics.map(m => el('option', {value: m}, m)));
  metric.value = current || data.metric || '';
  const box = document.getElementById('curve-chart');
  const ids = Object.keys(data.series);
  const all = ids.flatMap(id => data.series[id]);
  if (all.length === 0) { box.replaceChildren(el('p', {}, 'no results to draw yet')); return; }
  const log = document.getElementById('curve-log').checked;
  const plot = axes(box, all.map(p => p[0]), all.map(p => p[1]), 900, 420,
    {log, xLabel: data.x === 'time_total_s' ? 'time (s)' : 'iteration', yLabel: data.metric});
  const best = new Map(data.best.map((id, rank) => [id, rank]));
  // The best last, so they are drawn on top.
  ids.sort((a, b) => (best.has(b) ? -best.get(b) : -99) - (best.has(a) ? -best.get(a) : -99));
  for (const id of ids) {
    const points = data.series[id].filter(p => !log || p[1] > 0);
    if (points.length === 0) continue;
    const d = points.map((p, i) => `${i ? 'L' : 'M'}${plot.x(p[0]).toFixed(1)} ${plot.y(p[1]).toFixed(1)}`).join('');
    const rank = best.get(id);
    const path = svg('path', {d, class: 'curve' + (rank !== undefined ? ' best' : '')});
    path.dataset.trial = id;
    if (rank !== undefined) path.style.stroke = PALETTE[rank % PALETTE.length];
    plot.svg.append(path);
  }
  const tip = document.querySelector('#curves .tooltip');
  plot.svg.addEventListener('mousemove', event => hoverCurve(event, plot, data, tip, log));
  plot.svg.addEventListener('mouseleave', () => { tip.hidden = true; });
}

function hoverCurve(event, plot, data, tip, log) {
  const box = plot.svg.getBoundingClientRect();
  const mx = event.clientX - box.left, my = event.clientY - box.top;
  let found = null, distance = 15;
  for (const [id, points] of Object.entries(data.series)) {
    for (const p of points) {
      if (log && p[1] <= 0) continue;
      const d = Math.hypot(plot.x(p[0]) - mx, plot.y(p[1]) - my);
      if (d < distance) { distance = d; found = [id, p]; }
    }
  }
  for (const path of plot.svg.querySelectorAll('path.hover')) path.classList.remove('hover');
  if (!found) { tip.hidden = true; return; }
  const [id, p] = found;
  const path = plot.svg.querySelector(`path.curve[data-trial="${CSS.escape(id)}"]`);
  if (path) path.classList.add('hover');
  tip.replaceChildren(el('div', {}, data.names[id] || id),
    el('div', {}, `${data.x} ${shown(p[0])}`), el('div', {}, `${data.metric} ${shown(p[1])}`));
  tip.dataset.trial = id;
  tip.style.left = (event.clientX + 12) + 'px';
  tip.style.top = (event.clientY + 12) + 'px';
  tip.hidden = false;
}

// ---- decisions ----

async function loadDecisions() {
  const [data, table] = await Promise.all([getJson('/api/decisions'), getJson('/api/trials')]);
  state.trials = table;
  const select = document.getElementById('decision-trial');
  const ids = table.rows.map(r => r[0]);
  if (!state.selected || !ids.includes(state.selected)) state.selected = ids[0] || null;
  select.replaceChildren(...table.rows.map(r => el('option', {value: r[0]}, `${r[1]} (${r[2]})`)));
  if (state.selected) select.value = state.selected;
  document.getElementById('decision-kinds').replaceChildren(el('div', {class: 'cards'},
    ...Object.entries(data.kinds).map(([kind, count]) =>
      el('div', {class: 'card'}, el('div', {class: 'kind kind-' + kind}, kind), el('div', {class: 'big'}, count)))));
  drawRungs(data);
  drawLineage(data);
  await loadTrialTimeline();
}

async function loadTrialTimeline() {
  const box = document.getElementById('decision-trial-view');
  if (!state.selected) { box.replaceChildren(el('p', {}, 'no trial yet')); return; }
  const id = state.selected;
  const trial = await getJson('/api/trial?id=' + encodeURIComponent(id));
  if (id !== state.selected) return;  // chosen again meanwhile: that answer draws
  const items = trial.timeline.map(m => el('li', {dataset: {kind: m.kind}},
    el('span', {}, when(m.at)), el('span', {}, m.iteration === null ? '' : 'iter ' + m.iteration),
    el('span', {class: 'kind kind-' + m.kind}, m.kind), el('span', {class: 'why'}, m.why)));
  box.replaceChildren(
    el('h2', {}, `${trial.name}: ${trial.status.toLowerCase()} after ${trial.iteration} iterations`),
    el('div', {}, Object.entries(trial.config).map(([k, v]) => `${k}=${shown(v)}`).join(', ')),
    el('ol', {class: 'timeline', id: 'timeline', dataset: {trial: id}}, ...items),
    trial.error ? el('pre', {class: 'error-box'}, trial.error) : '');
}

function drawRungs(data) {
  const box = document.getElementById('decision-rungs');
  if (data.rungs.length === 0) { box.replaceChildren(); return; }
  const brackets = [...new Set(data.rungs.map(r => r.bracket))];
  const parts = [el('h2', {}, 'Rungs: each trial\'s value where it reached a milestone (filled: went on)')];
  for (const bracket of brackets) {
    const rungs = data.rungs.filter(r => r.bracket === bracket);
    const values = rungs.flatMap(r => r.points.map(p => p[1])).concat(rungs.map(r => r.cutoff)).filter(v => v !== null);
    if (values.length === 0) continue;
    const chart = el('div', {class: 'chart rungs'});
    const plot = axes(chart, [-0.5, rungs.length - 0.5], values, 120 + 140 * rungs.length, 260,
      {xLabel: `${bracket}: ${data.time_attr} at each rung`, yLabel: data.metric,
        xTicks: rungs.map((r, i) => [i, shown(r.milestone)])});
    rungs.forEach((rung, i) => {
      const x = plot.x(i);
      rung.points.forEach((p, j) => {
        if (p[1] === null) return;
        const dot = svg('circle', {cx: x - 30 + (j * 7) % 60, cy: plot.y(p[1]), r: 3,
          fill: p[2] ? PALETTE[2] : 'none', stroke: p[2] ? PALETTE[2] : PALETTE[1]});
        dot.append(svg('title', {}, `${data.names[p[0]] || p[0]}: ${shown(p[1])}`));
        plot.svg.append(dot);
      });
      if (rung.cutoff !== null) {
        plot.svg.append(svg('line', {x1: x - 30, x2: x + 30, y1: plot.y(rung.cutoff), y2: plot.y(rung.cutoff),
          stroke: '#111', 'stroke-dasharray': '4 2', class: 'cutoff'}));
      }
    });
    parts.push(chart);
  }
  box.replaceChildren(...parts);
}

function drawLineage(data) {
  const box = document.getElementById('decision-lineage');
  if (data.lineage.length === 0) { box.replaceChildren(); return; }
  const ids = [...new Set(data.lineage.flatMap(e => [e.trial, e.donor]).filter(Boolean))].sort();
  const lane = new Map(ids.map((id, i) => [id, i]));
  const chart = el('div', {class: 'chart', id: 'lineage'});
  const iterations = data.lineage.map(e => e.iteration || 0);
  const plot = axes(chart, [0, Math.max(...iterations) + 1], [-0.5, ids.length - 0.5], 900, 70 + 34 * ids.length,
    {xLabel: 'iteration', yLabel: '', left: 200, yTicks: ids.map(id => [lane.get(id), data.names[id] || id])});
  for (const id of ids) {
    plot.svg.append(svg('line', {x1: plot.x(0), x2: plot.x(plot.x1), y1: plot.y(lane.get(id)), y2: plot.y(lane.get(id)),
      stroke: '#dde2e9'}));
  }
  const atIteration = new Map();
  for (const e of data.lineage) {
    if (!e.donor) continue;
    const nth = atIteration.get(e.iteration) || 0;
    atIteration.set(e.iteration, nth + 1);
    const x = plot.x(e.iteration || 0) + 7 * nth;  // exploits at one iteration side by side
    const [from, to] = [plot.y(lane.get(e.donor)), plot.y(lane.get(e.trial))];
    const edge = svg('line', {x1: x, y1: from, x2: x, y2: to, stroke: PALETTE[3], 'stroke-width': 2, class: 'exploit'});
    edge.append(svg('title', {}, `${data.names[e.trial] || e.trial} took ${data.names[e.donor] || e.donor} at iteration ${e.iteration}`));
    plot.svg.append(edge);
    plot.svg.append(svg('circle', {cx: x, cy: from, r: 3, fill: '#fff', stroke: PALETTE[3]}));
    plot.svg.append(svg('circle', {cx: x, cy: to, r: 4, fill: PALETTE[3]}));
  }
  box.replaceChildren(el('h2', {}, 'PBT lineage: each exploit, from the donor (open) to the trial that took its place (filled)'), chart);
}

// ---- parameters ----

async function loadParams() {
  const data = await getJson('/api/trials');
  state.trials = data;
  const rows = data.rows.filter(r => r[5] !== null);
  drawImportance(data, rows);
  drawParallel(data, rows);
  const select = document.getElementById('scatter-param');
  const current = select.value;
  select.replaceChildren(...data.params.map(p => el('option', {value: p}, p)));
  select.value = current || data.params[0] || '';
  drawScatter(data, rows, data.params.indexOf(select.value));
}

// How much of the best value's spread each hyperparameter explains: for a
// numeric one |Spearman's rho| (rank correlation, so any monotone effect
// counts, on a log scale or not), for a categorical one the correlation
// ratio eta^2 (the share of the variance between its values' groups).
// Both lie in [0, 1]; a constant parameter explains nothing.
function importance(values, scores) {
  const pairs = values.map((v, i) => [v, scores[i]]).filter(p => p[0] !== null && p[1] !== null);
  if (pairs.length < 3) return null;
  if (pairs.every(p => typeof p[0] === 'number')) {
    const rx = ranks(pairs.map(p => p[0])), ry = ranks(pairs.map(p => p[1]));
    return Math.abs(pearson(rx, ry));
  }
  const mean = pairs.reduce((sum, p) => sum + p[1], 0) / pairs.length;
  const total = pairs.reduce((sum, p) => sum + (p[1] - mean) ** 2, 0);
  if (total === 0) return 0;
  const groups = new Map();
  for (const [v, y] of pairs) {
    const key = String(v);
    const group = groups.get(key) || [0, 0];
    groups.set(key, [group[0] + y, group[1] + 1]);
  }
  let between = 0;
  for (const [sum, count] of groups.values()) between += count * (sum / count - mean) ** 2;
  return between / total;
}

function ranks(values) {
  const order = values.map((v, i) => [v, i]).sort((a, b) => a[0] - b[0]);
  const out = new Array(values.length);
  for (let i = 0; i < order.length;) {
    let j = i;
    while (j + 1 < order.length && order[j + 1][0] === order[i][0]) j++;
    for (let k = i; k <= j; k++) out[order[k][1]] = (i + j) / 2;  // ties share their mean rank
    i = j + 1;
  }
  return out;
}

function pearson(xs, ys) {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n, my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0, sxx = 0, syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i] - mx) * (ys[i] - my);
    sxx += (xs[i] - mx) ** 2;
    syy += (ys[i] - my) ** 2;
  }
  return sxx === 0 || syy === 0 ? 0 : sxy / Math.sqrt(sxx * syy);
}

function drawImportance(data, rows) {
  const box = document.getElementById('importance');
  const scores = rows.map(r => r[5]);
  const found = data.params.map((p, i) => [p, importance(rows.map(r => r[7][i]), scores)])
    .filter(p => p[1] !== null).sort((a, b) => b[1] - a[1]);
  if (found.length === 0) { box.replaceChildren(el('p', {}, 'needs three trials with the metric')); return; }
  const width = 760, bar = 22, left = 180;
  const chart = svg('svg', {width, height: 10 + bar * found.length});
  found.forEach(([name, value], i) => {
    const y = 5 + i * bar;
    chart.append(svg('text', {x: left - 6, y: y + 15, 'text-anchor': 'end'}, name));
    const rect = svg('rect', {x: left, y, width: Math.max(1, value * (width - left - 60)), height: bar - 6,
      fill: PALETTE[0], class: 'importance-bar'});
    rect.dataset.param = name;
    rect.dataset.value = String(value);
    chart.append(rect);
    chart.append(svg('text', {x: left + value * (width - left - 60) + 6, y: y + 15}, value.toFixed(2)));
  });
  box.replaceChildren(chart);
}

function axisOf(values) {
  const numeric = values.every(v => v === null || typeof v === 'number');
  if (numeric) {
    const finite = values.filter(v => v !== null);
    const [lo, hi] = [Math.min(...finite), Math.max(...finite)];
    const log = lo > 0 && hi / lo > 50;
    const f = log ? Math.log10 : (v => v);
    return {at: v => (v === null ? null : (hi > lo ? (f(v) - f(lo)) / (f(hi) - f(lo)) : 0.5)), label: v => shown(v), lo, hi};
  }
  const levels = [...new Set(values.map(v => String(v)))].sort();
  return {at: v => (levels.length > 1 ? levels.indexOf(String(v)) / (levels.length - 1) : 0.5), label: v => String(v), levels};
}

function drawParallel(data, rows) {
  const box = document.getElementById('parallel');
  if (rows.length === 0 || data.params.length === 0) { box.replaceChildren(el('p', {}, 'no trial has reported the metric yet')); return; }
  const names = [...data.params, `best ${data.metric}`];
  const columns = names.map((_, i) => rows.map(r => (i < data.params.length ? r[7][i] : r[5])));
  const scales = columns.map(axisOf);
  const width = Math.max(600, 140 * names.length), height = 340, top = 30, bottom = 30;
  const chart = svg('svg', {width, height});
  const x = i => 60 + i * (width - 120) / Math.max(1, names.length - 1);
  const y = t => top + (1 - t) * (height - top - bottom);
  const objective = scales[scales.length - 1];
  const shade = v => {
    const t = objective.at(v);
    const good = data.mode === 'min' ? 1 - t : t;
    return `hsl(${Math.round(220 - 200 * good)}, 70%, 45%)`;
  };
  rows.forEach((row, r) => {
    const points = columns.map((col, i) => [x(i), scales[i].at(col[r])]).filter(p => p[1] !== null);
    const line = svg('polyline', {points: points.map(p => `${p[0]},${y(p[1])}`).join(' '), fill: 'none',
      stroke: shade(row[5]), 'stroke-opacity': 0.6, class: 'parallel-line'});
    line.append(svg('title', {}, `${row[1]}: ${shown(row[5])}`));
    chart.append(line);
  });
  names.forEach((name, i) => {
    chart.append(svg('line', {x1: x(i), x2: x(i), y1: top, y2: height - bottom, stroke: '#555'}));
    chart.append(svg('text', {x: x(i), y: top - 10, 'text-anchor': 'middle', class: 'axis-name'}, name));
    const s = scales[i];
    const ends = s.levels ? [s.levels[0], s.levels[s.levels.length - 1]] : [s.lo, s.hi];
    chart.append(svg('text', {x: x(i) + 4, y: height - bottom + 14}, s.label(ends[0])));
    chart.append(svg('text', {x: x(i) + 4, y: top + 12}, s.label(ends[1])));
  });
  box.replaceChildren(chart);
}

function drawScatter(data, rows, index) {
  const box = document.getElementById('scatter');
  if (index < 0 || rows.length === 0) { box.replaceChildren(); return; }
  const values = rows.map(r => r[7][index]);
  const scale = axisOf(values);
  const plot = axes(box, [0, 1], rows.map(r => r[5]), 760, 320,
    {xLabel: data.params[index] + (scale.levels ? ' (' + scale.levels.join(', ') + ')' : ''), yLabel: `best ${data.metric}`});
  const span = plot.x1 - plot.x0;
  rows.forEach((row, r) => {
    const t = scale.at(values[r]);
    if (t === null) return;
    const dot = svg('circle', {cx: plot.x(plot.x0 + t * span), cy: plot.y(row[5]), r: 4, fill: PALETTE[0], 'fill-opacity': 0.6, class: 'scatter-dot'});
    dot.append(svg('title', {}, `${row[1]}: ${data.params[index]}=${shown(values[r])}, ${shown(row[5])}`));
    plot.svg.append(dot);
  });
}

// ---- what-if ----

async function submitWhatIf(event) {
  event.preventDefault();
  const options = {};
  for (const name of ['max_t', 'grace_period', 'reduction_factor']) {
    const value = document.getElementById('whatif-' + name).value;
    if (value !== '') options[name] = Number(value);
  }
  const scheduler = document.getElementById('whatif-scheduler').value;
  const out = document.getElementById('whatif-result');
  out.replaceChildren(el('p', {}, 'simulating...'));
  const response = await fetch('/api/whatif', {method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({scheduler, options})});
  const data = await response.json();
  if (!response.ok) { out.replaceChildren(el('div', {class: 'problem'}, data.error)); return; }
  const table = el('table', {id: 'whatif-table'}, el('thead', {}, el('tr', {}, el('th', {class: 'text'}, ''),
    el('th', {}, 'recorded run'), el('th', {}, 'what-if: ' + scheduler))),
    el('tbody', {}, ...data.table.map(row => el('tr', {}, el('td', {class: 'text'}, row[0]),
      el('td', {}, shown(row[1])), el('td', {}, shown(row[2]))))));
  out.replaceChildren(table);
}

// ---- wiring ----

for (const button of document.querySelectorAll('#tabs button')) {
  button.addEventListener('click', () => showTab(button.dataset.tab));
}
document.getElementById('filter').addEventListener('input', () => { state.page = 0; drawTable(); });
document.getElementById('status-filter').addEventListener('change', () => { state.page = 0; drawTable(); });
document.getElementById('prev-page').addEventListener('click', () => { state.page = Math.max(0, state.page - 1); drawTable(); });
document.getElementById('next-page').addEventListener('click', () => { state.page += 1; drawTable(); });
for (const id of ['curve-metric', 'curve-x', 'curve-log']) {
  document.getElementById(id).addEventListener('change', () => loadCurves());
}
document.getElementById('curve-trials').addEventListener('change', () => loadCurves());
document.getElementById('curve-best').addEventListener('click', () => {
  document.getElementById('curve-trials').value = '';
  loadCurves();
});
document.getElementById('decision-trial').addEventListener('change', event => {
  state.selected = event.target.value;
  loadTrialTimeline();
});
document.getElementById('scatter-param').addEventListener('change', () => loadParams());
document.getElementById('whatif-form').addEventListener('submit', submitWhatIf);

getJson('/api/overview').then(data => {
  document.getElementById('title').textContent = 'tunecore: ' + data.name;
  document.title = 'tunecore: ' + data.name;
}).catch(() => {});
const initial = new URLSearchParams(location.hash.slice(1)).get('tab');
showTab(RENDER[initial] ? initial : 'overview');
setInterval(() => refresh(false), 1000);
