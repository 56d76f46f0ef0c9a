// The interactive page `tunecore plot --out FILE.html` writes: draws the
// learning curves held in the page's JSON block as SVG, with the best trials
// in colour, a tooltip for the point under the mouse, a log-scale switch, and
// a list of the trials in which a click highlights one. Needs no network.
// Every text from the experiment's log is set with textContent or
// setAttribute, never parsed as HTML (a metric's name may be markup).
"use strict";

(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const WIDTH = 780;
  const HEIGHT = 460;
  const MARGIN = { left: 70, right: 20, top: 14, bottom: 46 };
  const NEAR = 30; // how close (px) the mouse must be to a point to show it
  const GREY = "#9a9a9a";
  const PICKED_GREY = "#222";

  const data = JSON.parse(document.getElementById("tunecore-plot-data").textContent);
  const root = document.getElementById("tunecore-plot");
  const trials = data.trials; // best first
  const picked = new Set(); // the trials clicked in the list, drawn over all others
  let logScale = false;
  const colourOf = (trial) =>
    trial.rank === null ? (picked.has(trial.id) ? PICKED_GREY : GREY) : data.colours[trial.rank];

  function make(tag, attributes, text) {
    const node = tag.startsWith("svg:")
      ? document.createElementNS(SVG, tag.slice(4))
      : document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      node.setAttribute(name, String(value));
    }
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function shown(value) {
    return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(4)));
  }

  // A text from the log as much of it as a label has room for.
  function clipped(text, length) {
    return text.length <= length ? text : text.slice(0, length - 1) + "\u2026";
  }

  // -- scales and ticks -----------------------------------------------------

  function niceTicks(low, high, count, integer) {
    let step = Math.pow(10, Math.floor(Math.log10((high - low) / count)));
    const ratio = (high - low) / count / step;
    if (ratio >= 7.5) step *= 10;
    else if (ratio >= 3.5) step *= 5;
    else if (ratio >= 1.5) step *= 2;
    if (integer) step = Math.max(1, Math.round(step));
    const ticks = [];
    for (let tick = Math.ceil(low / step) * step; tick <= high + step * 1e-9; tick += step) {
      ticks.push(Number(tick.toPrecision(12)));
    }
    return ticks;
  }

  function logTicks(low, high) {
    const ticks = [];
    const steps = Math.log10(high / low) < 2 ? [1, 2, 5] : [1];
    for (let power = Math.floor(Math.log10(low)); power <= Math.ceil(Math.log10(high)); power++) {
      for (const step of steps) {
        const tick = Number((step * Math.pow(10, power)).toPrecision(12));
        if (tick >= low && tick <= high) ticks.push(tick);
      }
    }
    return ticks;
  }

  // The lowest and highest of `values` (a loop: spreading a few hundred
  // thousand points into Math.min's arguments overflows the stack).
  function extent(values) {
    let [low, high] = [Infinity, -Infinity];
    for (const value of values) [low, high] = [Math.min(low, value), Math.max(high, value)];
    return [low, high];
  }

  // A range and a little room around it (the end markers stay inside the
  // frame); on a log scale the room is a ratio.
  function span([low, high], integer, log) {
    if (log) {
      const room = Math.pow(high / low, 0.03) * 1.02;
      return [low / room, high * room];
    }
    const pad = low === high ? (integer ? 1 : Math.abs(low) * 0.1 || 1) : (high - low) * 0.03;
    return [low - pad, high + pad];
  }

  const xRange = extent(trials.flatMap((trial) => trial.xs));
  const yRange = extent(trials.flatMap((trial) => trial.ys));
  const anyPoint = yRange[0] <= yRange[1];
  const canLog = anyPoint && yRange[0] > 0;

  function scales() {
    const [x0, x1] = span(xRange, data.integer_x, false);
    const [y0, y1] = span(yRange, false, logScale);
    const [ly0, ly1] = logScale ? [Math.log10(y0), Math.log10(y1)] : [y0, y1];
    const plotW = WIDTH - MARGIN.left - MARGIN.right;
    const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
    return {
      x: (x) => MARGIN.left + ((x - x0) / (x1 - x0)) * plotW,
      y: (y) => MARGIN.top + plotH - (((logScale ? Math.log10(y) : y) - ly0) / (ly1 - ly0)) * plotH,
      xTicks: niceTicks(x0, x1, 8, data.integer_x),
      yTicks: logScale ? logTicks(y0, y1) : niceTicks(y0, y1, 6, false),
    };
  }

  // -- the chart ------------------------------------------------------------

  const svg = make("svg:svg", {
    width: WIDTH,
    height: HEIGHT,
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    role: "img",
    "aria-label": `${data.metric} per ${data.x_key}`,
  });
  const tooltip = make("div", { class: "tooltip", role: "status" });
  tooltip.hidden = true;
  let points = []; // [screen x, screen y, trial, index] of every drawn point

  function endMarker(trial, x, y) {
    if (trial.end === "error") {
      return make("svg:path", { class: "end error", d: `M${x} ${y - 5}l5 9h-10z` });
    }
    if (trial.end === "stopped") {
      return make("svg:path", { class: "end stopped", d: `M${x - 4} ${y - 4}l8 8m0 -8l-8 8` });
    }
    return make("svg:circle", { class: "end ended", cx: x, cy: y, r: 3 });
  }

  function draw() {
    svg.replaceChildren();
    svg.dataset.scale = logScale ? "log" : "linear";
    const scale = scales();
    const axes = make("svg:g", { class: "axes" });
    const bottom = HEIGHT - MARGIN.bottom;
    for (const tick of scale.xTicks) {
      const x = scale.x(tick);
      axes.append(make("svg:line", { class: "grid", x1: x, x2: x, y1: MARGIN.top, y2: bottom }));
      axes.append(make("svg:text", { class: "tick x", x: x, y: bottom + 16 }, shown(tick)));
    }
    for (const tick of scale.yTicks) {
      const y = scale.y(tick);
      axes.append(
        make("svg:line", { class: "grid", x1: MARGIN.left, x2: WIDTH - MARGIN.right, y1: y, y2: y })
      );
      axes.append(make("svg:text", { class: "tick y", x: MARGIN.left - 6, y: y + 4 }, shown(tick)));
    }
    axes.append(
      make("svg:rect", {
        class: "frame",
        x: MARGIN.left,
        y: MARGIN.top,
        width: WIDTH - MARGIN.left - MARGIN.right,
        height: bottom - MARGIN.top,
      })
    );
    axes.append(make("svg:text", { class: "label", x: WIDTH / 2, y: HEIGHT - 8 }, data.x_key));
    const yLabel = clipped(data.metric, 60) + (logScale ? " (log scale)" : "");
    const turned = `translate(16 ${HEIGHT / 2}) rotate(-90)`;
    axes.append(make("svg:text", { class: "label", transform: turned }, yLabel));
    svg.append(axes);

    points = [];
    const curves = make("svg:g", { class: "curves" });
    const marks = make("svg:g", { class: "marks" });
    // Grey first, then the best (the best on top), the picked over all.
    const order = [...trials].sort((a, b) => layer(a) - layer(b));
    for (const trial of order) {
      if (trial.xs.length === 0) continue;
      const xy = trial.xs.map((x, i) => [scale.x(x), scale.y(trial.ys[i])]);
      xy.forEach(([x, y], i) => points.push([x, y, trial, i]));
      // A PBT exploit breaks the curve (it goes on from another trial's
      // checkpoint); a dotted line joins the two sides.
      const jumps = new Set(trial.exploited.filter((index) => index > 0 && index < xy.length));
      const steps = xy.map(
        ([x, y], i) => `${i === 0 || jumps.has(i) ? "M" : "L"}${x.toFixed(1)} ${y.toFixed(1)}`
      );
      const path = make("svg:path", {
        class: "curve",
        d: steps.join(""),
        stroke: colourOf(trial),
        "data-trial": trial.id,
      });
      path.classList.toggle("best", trial.rank !== null);
      path.classList.toggle("picked", picked.has(trial.id));
      path.classList.toggle("dimmed", picked.size > 0 && !picked.has(trial.id));
      curves.append(path);
      for (const index of jumps) {
        const [[x1, y1], [x2, y2]] = [xy[index - 1], xy[index]];
        marks.append(make("svg:line", { class: "exploit", x1: x1, y1: y1, x2: x2, y2: y2 }));
      }
      for (const index of trial.paused) {
        const [x, y] = xy[index];
        const square = { class: "end paused", x: x - 3, y: y - 3, width: 6, height: 6 };
        marks.append(make("svg:rect", square));
      }
      const [x, y] = xy[xy.length - 1];
      marks.append(endMarker(trial, x, y));
    }
    svg.append(curves, marks);
  }

  function layer(trial) {
    if (picked.has(trial.id)) return 3;
    return trial.rank === null ? 1 : 2 + (data.colours.length - trial.rank) / 100;
  }

  // -- the tooltip ----------------------------------------------------------

  const hoverDot = make("svg:circle", { class: "hover", r: 5 });

  function nearest(event) {
    const box = svg.getBoundingClientRect();
    const mx = event.clientX - box.left;
    const my = event.clientY - box.top;
    let best = null;
    let bestDistance = NEAR;
    for (const point of points) {
      // On a tie the later point wins: it is drawn on top, the one seen.
      const distance = Math.hypot(point[0] - mx, point[1] - my);
      if (distance <= bestDistance) [best, bestDistance] = [point, distance];
    }
    return best;
  }

  svg.addEventListener("mousemove", (event) => {
    const point = nearest(event);
    if (point === null) {
      tooltip.hidden = true;
      hoverDot.remove();
      return;
    }
    const [x, y, trial, index] = point;
    hoverDot.setAttribute("cx", x);
    hoverDot.setAttribute("cy", y);
    hoverDot.setAttribute("stroke", colourOf(trial));
    svg.append(hoverDot);
    const lines = [
      [trial.name, "name"],
      [`${data.x_key}: ${shown(trial.xs[index])}`, ""],
      [`${data.metric}: ${shown(trial.ys[index])}`, ""],
      ...Object.entries(trial.params).map(([key, value]) => [`${key} = ${value}`, "param"]),
    ];
    if (trial.error) lines.push([`error: ${trial.error}`, "error"]);
    tooltip.replaceChildren(
      ...lines.map(([text, kind]) => make("div", { class: kind }, clipped(text, 200)))
    );
    tooltip.dataset.trial = trial.id;
    tooltip.hidden = false;
    tooltip.style.left = `${event.pageX + 14}px`;
    tooltip.style.top = `${event.pageY + 14}px`;
  });
  svg.addEventListener("mouseleave", () => {
    tooltip.hidden = true;
    hoverDot.remove();
  });

  // -- the controls and the list of trials ---------------------------------

  const controls = make("div", { class: "controls" });
  const logBox = make("input", { type: "checkbox", id: "log-scale" });
  logBox.disabled = !canLog;
  logBox.addEventListener("change", () => {
    logScale = logBox.checked;
    draw();
  });
  const logLabel = make("label", { for: "log-scale" }, " log scale");
  logLabel.prepend(logBox);
  controls.append(logLabel);
  if (!canLog) {
    controls.append(make("span", { class: "why" }, ` (not every ${data.metric} is above 0)`));
  }
  const key = make("span", { class: "key" });
  const kinds = [
    ["ended", "ran to its end (or max_t)"],
    ["stopped", "stopped by the policy"],
    ["error", "error"],
    ["paused", "paused"],
  ];
  if (trials.some((trial) => trial.exploited.length > 0)) {
    kinds.push(["exploit", "PBT exploit (took a better trial's checkpoint)"]);
  }
  for (const [kind, words] of kinds) {
    key.append(make("span", { class: `glyph ${kind}` }), make("span", {}, words));
  }
  controls.append(key);

  const legend = make("ol", { class: "legend" });
  for (const trial of trials) {
    // Two lines cut to the list's width; the whole entry shows when hovered.
    const last = trial.ys.length ? `${data.metric} ${shown(trial.ys[trial.ys.length - 1])}` : "";
    const params = Object.entries(trial.params).map(([k, v]) => `${k}=${v}`);
    const details = [last, params.join(", ")].filter(Boolean).join(" \u00b7 ");
    const entry = make("li", {
      "data-trial": trial.id,
      title: `${trial.name}\n${details}`,
      tabindex: 0,
      role: "button",
    });
    const swatch = make("span", { class: "swatch" });
    swatch.style.background = trial.rank === null ? GREY : data.colours[trial.rank];
    entry.append(swatch, make("span", { class: "name" }, trial.name));
    entry.append(make("div", { class: "params" }, details));
    entry.addEventListener("click", () => {
      if (picked.has(trial.id)) picked.delete(trial.id);
      else picked.add(trial.id);
      entry.classList.toggle("picked", picked.has(trial.id));
      draw();
    });
    entry.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        entry.click();
      }
    });
    legend.append(entry);
  }

  const body = make("div", { class: "body" });
  body.append(svg, legend);
  root.append(controls, body);
  document.body.append(tooltip);
  if (anyPoint) draw();
  else {
    const middle = { class: "label", x: WIDTH / 2, y: HEIGHT / 2 };
    svg.append(make("svg:text", middle, `no ${data.metric} reported yet`));
  }
})();
