/* nervapack visualize: draws the view data of nervapack_core/code/visualize.py with plotly.js.
 *
 * Rules: every text from the graph or the memory reaches the DOM through textContent (never
 * innerHTML); what Plotly draws as text goes through esc() (Plotly reads a small HTML subset
 * in labels, so "<" and "&" are given as entities). Positions come from Python: nothing is
 * simulated here. Views: the community map, one community, all nodes, a path. */
(function () {
  'use strict';
  var startedAt = performance.now();  // plotly.js evaluated, nothing of ours yet
  var D = JSON.parse(document.getElementById('np-data').textContent);
  var parsedAt = performance.now();
  var N = D.n, E = D.e, C = D.c;
  var nNodes = N.name.length, nComm = C.label.length, nEdges = E.s.length;
  var PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7',
    '#9c755f', '#bab0ac', '#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2',
    '#17becf', '#bcbd22', '#7f7f7f'];
  var KIND_COLORS = { file: '#4e79a7', class: '#f28e2b', function: '#59a14f', variable: '#76b7b2', doc: '#b07aa1',
    import: '#9d9d9d' };
  var KIND_SIZE = { file: 11, class: 9, function: 6, variable: 5, doc: 6, import: 4 };
  var LOOSE = '#c3c7cd';
  // above GL_NODES nodes or SVG_EDGES edges a view draws with WebGL; arrow heads (one SVG element
  // each) only up to ARROWS edges; more than MAX_EDGES edges at once are not drawn at all
  var GL_NODES = 1500, SVG_EDGES = 8000, ARROWS = 600, MAX_EDGES = 25000, LABELS = 60;

  var state = {
    view: D.start, community: -1, selected: -1, selComm: -1, hideKinds: {}, hideLangs: {},
    colorBy: D.groups ? 'group' : (D.kind === 'graph' ? 'community' : 'kind'),
    matches: null, from: -1, to: -1, path: null, pathEdges: null
  };
  var plot = document.getElementById('np-plot');
  var lower = null;  // lower-cased names, built on the first search
  var adj = null;    // adjacency (CSR), built on the first path search or details
  var members = null;  // nodes of each community

  // ------------------------------------------------------------------ small helpers
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }
  function button(text, onClick, cls) {
    var b = el('button', cls || '', text);
    b.type = 'button';
    b.addEventListener('click', onClick);
    return b;
  }
  function clear(node) { while (node.firstChild) { node.removeChild(node.firstChild); } }
  function esc(s) {  // for text Plotly draws: its label markup sees entities, never tags
    return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  }
  function kindOf(i) { return D.kinds[N.kind[i]]; }
  function langOf(i) { return D.langs[N.lang[i]]; }
  function fileOf(i) { return D.files[N.file[i]]; }
  function qname(i) { return N.qn[i] || N.name[i]; }
  function where(i) {
    var f = fileOf(i);
    return kindOf(i) === 'file' || !N.start[i] ? f : f + ':' + N.start[i] + (N.end[i] > N.start[i] ? '-' + N.end[i] : '');
  }
  function fmt(n) { return Number(n).toLocaleString('en-US'); }
  function visible(i) { return !state.hideKinds[N.kind[i]] && !state.hideLangs[N.lang[i]]; }
  function commColor(c) { return C.loose[c] ? LOOSE : PALETTE[c % PALETTE.length]; }
  function nodeColor(i) {
    if (state.colorBy === 'kind') { return KIND_COLORS[kindOf(i)] || '#888'; }
    if (state.colorBy === 'language') { return PALETTE[N.lang[i] % PALETTE.length]; }
    if (state.colorBy === 'group' && D.groups) { return D.groups.colors[D.groups.of[i]]; }
    return nComm ? commColor(N.c[i]) : '#4e79a7';
  }
  function colorModel() {  // numbers on a discrete colour scale: WebGL needs no colour string per point
    var colors, value;
    if (state.colorBy === 'kind') {
      colors = D.kinds.map(function (k) { return KIND_COLORS[k] || '#888'; });
      value = function (i) { return N.kind[i]; };
    } else if (state.colorBy === 'language') {
      colors = D.langs.map(function (l, k) { return PALETTE[k % PALETTE.length]; });
      value = function (i) { return N.lang[i]; };
    } else if (state.colorBy === 'group' && D.groups) {
      colors = D.groups.colors;
      value = function (i) { return D.groups.of[i]; };
    } else {
      colors = PALETTE.concat([LOOSE]);
      value = nComm ? function (i) { return C.loose[N.c[i]] ? PALETTE.length : N.c[i] % PALETTE.length; }
        : function () { return 0; };
    }
    var last = Math.max(colors.length - 1, 1), scale = colors.map(function (c, k) { return [k / last, c]; });
    if (colors.length === 1) { scale.push([1, colors[0]]); }
    return { scale: scale, value: value, max: last };
  }
  function getMembers() {
    if (!members) {
      members = [];
      for (var c = 0; c < nComm; c++) { members.push([]); }
      for (var i = 0; i < nNodes; i++) { if (nComm) { members[N.c[i]].push(i); } }
    }
    return members;
  }
  function getAdj() {  // CSR: out[i] / in[i] edge ids
    if (adj) { return adj; }
    function csr(from) {
      var start = new Int32Array(nNodes + 1), list = new Int32Array(nEdges), k;
      for (k = 0; k < nEdges; k++) { start[from[k] + 1]++; }
      for (k = 0; k < nNodes; k++) { start[k + 1] += start[k]; }
      var fill = start.slice(0, nNodes);
      for (k = 0; k < nEdges; k++) { list[fill[from[k]]++] = k; }
      return { start: start, list: list };
    }
    adj = { out: csr(E.s), inn: csr(E.t) };
    return adj;
  }

  // ------------------------------------------------------------------ tooltip
  var tip = document.getElementById('np-tip');
  function showTip(ev, lines) {
    clear(tip);
    lines.forEach(function (l, k) { tip.appendChild(el('div', k ? 'np-muted' : '', l)); });
    tip.hidden = false;
    var x = (ev && ev.clientX) || 0, y = (ev && ev.clientY) || 0;
    tip.style.left = Math.min(x + 14, window.innerWidth - 440) + 'px';
    tip.style.top = (y + 14) + 'px';
  }
  function hideTip() { tip.hidden = true; }

  // ------------------------------------------------------------------ traces
  function edgeTrace(list, xs, ys, arrows, color, width, gl) {
    var x = [], y = [], size = [];
    list.forEach(function (k) {
      var a = E.s[k], b = E.t[k], ax = xs(a), ay = ys(a), bx = xs(b), by = ys(b);
      if (arrows) {  // an arrow head two thirds of the way, pointing from source to target
        x.push(ax, ax + (bx - ax) * 0.66, bx, null); y.push(ay, ay + (by - ay) * 0.66, by, null);
        size.push(0, 7, 0, 0);
      } else { x.push(ax, bx, null); y.push(ay, by, null); }
    });
    var t = { x: x, y: y, mode: arrows ? 'lines+markers' : 'lines', hoverinfo: 'skip', showlegend: false,
      type: gl && !arrows ? 'scattergl' : 'scatter', meta: 'edges',
      line: { color: color || 'rgba(120,130,140,0.22)', width: width || 0.6 } };
    if (arrows) {
      t.marker = { symbol: 'arrow', angleref: 'previous', size: size.map(function (v) { return v * (width ? 1.6 : 1); }),
        color: color || 'rgba(90,100,110,0.45)' };
    }
    return t;
  }

  function nodesView(idx, notes) {
    var vis = idx.filter(visible);
    var mark = new Uint8Array(nNodes);
    vis.forEach(function (i) { mark[i] = 1; });
    var a = getAdj(), list = [];
    vis.forEach(function (i) {
      for (var p = a.out.start[i]; p < a.out.start[i + 1]; p++) {
        var k = a.out.list[p];
        if (mark[E.t[k]]) { list.push(k); }
      }
    });
    var traces = [];
    if (list.length > MAX_EDGES) {
      notes.push(fmt(list.length) + ' edges not drawn (too many at once): open a community or search to see them.');
    } else if (list.length) {
      traces.push(edgeTrace(list, function (i) { return N.x[i]; }, function (i) { return N.y[i]; },
        list.length <= ARROWS, null, null, list.length > SVG_EDGES));
    }
    var m = state.matches, sel = state.selected;
    if (sel >= 0 && mark[sel]) {  // the selected node's own links, in colour, with their direction
      var mine = [];
      for (var p = a.out.start[sel]; p < a.out.start[sel + 1]; p++) { if (mark[E.t[a.out.list[p]]]) { mine.push(a.out.list[p]); } }
      for (p = a.inn.start[sel]; p < a.inn.start[sel + 1]; p++) { if (mark[E.s[a.inn.list[p]]]) { mine.push(a.inn.list[p]); } }
      if (mine.length) {
        traces.push(edgeTrace(mine, function (i) { return N.x[i]; }, function (i) { return N.y[i]; },
          mine.length <= ARROWS, 'rgba(207,34,46,0.75)', 1.4, mine.length > SVG_EDGES));
      }
    }
    var targets = {};
    (D.targets || []).forEach(function (i) { targets[i] = 1; });
    var n = vis.length, size = new Array(n), color = new Array(n), symbol = new Array(n), x = new Array(n),
      y = new Array(n), opacity = m ? new Array(n) : 0.9, cm = colorModel(), sizeOf = D.kinds.map(function (k) {
        return KIND_SIZE[k] || 6; }), fileKind = D.kinds.indexOf('file');
    for (var v = 0; v < n; v++) {
      var i = vis[v], sz = sizeOf[N.kind[i]], hit = m ? m.has(i) : true;
      if (targets[i]) { sz += 6; }
      if (m && hit) { sz += 5; }
      size[v] = sz;
      color[v] = cm.value(i);
      symbol[v] = N.kind[i] === fileKind ? 2 : 0;  // diamond, circle
      x[v] = N.x[i];
      y[v] = N.y[i];
      if (m) { opacity[v] = hit ? 0.9 : 0.15; }
    }
    var gl = n > GL_NODES;
    traces.push({ x: x, y: y, customdata: vis, mode: 'markers', type: gl ? 'scattergl' : 'scatter',
      hoverinfo: 'none', meta: 'nodes',
      marker: { size: size, color: color, colorscale: cm.scale, cmin: 0, cmax: cm.max, showscale: false,
        symbol: symbol, opacity: opacity, line: { width: gl ? 0 : 0.5, color: '#ffffff' } } });
    // labels: selected node, targets, matches (a few), files (the best connected)
    var lab = [];
    if (sel >= 0 && mark[sel]) { lab.push(sel); }
    Object.keys(targets).forEach(function (i) { if (mark[i]) { lab.push(+i); } });
    if (m && m.size <= 30) { m.forEach(function (i) { if (mark[i]) { lab.push(i); } }); }
    if (D.distance) {  // a neighbourhood: name the first ring when it is small enough to read
      var ring = vis.filter(function (i) { return D.distance[i] === 1; });
      if (ring.length <= 40) { lab = lab.concat(ring); }
    }
    var files = vis.filter(function (i) { return kindOf(i) === 'file'; });
    if (vis.length <= 40) { files = vis; }
    files.sort(function (p, q) { return N.deg[q] - N.deg[p]; });
    lab = lab.concat(files.slice(0, LABELS));
    var seen = {};
    lab = lab.filter(function (i) { if (seen[i]) { return false; } seen[i] = 1; return true; });
    traces.push({ x: lab.map(function (i) { return N.x[i]; }), y: lab.map(function (i) { return N.y[i]; }),
      text: lab.map(function (i) { return esc(N.name[i]); }), customdata: lab, mode: 'text', type: 'scatter',
      textposition: 'top center', textfont: { size: 11, color: '#24292f' }, hoverinfo: 'none', meta: 'labels',
      cliponaxis: false });
    if (sel >= 0 && mark[sel]) {
      traces.push({ x: [N.x[sel]], y: [N.y[sel]], customdata: [sel], mode: 'markers', type: 'scatter',
        hoverinfo: 'none', meta: 'nodes', marker: { size: 22, color: 'rgba(0,0,0,0)',
          line: { width: 2.5, color: '#cf222e' } } });
    }
    return { traces: traces, shown: vis.length, edges: list.length };
  }

  function mapView() {
    var traces = [], idx = [];
    for (var c = 0; c < nComm; c++) { idx.push(c); }
    if (state.selComm >= 0) {
      var s = state.selComm, links = C.links[s], wmax = links.length ? links[0][1] : 1;
      links.forEach(function (l) {
        traces.push({ x: [C.x[s], C.x[l[0]]], y: [C.y[s], C.y[l[0]]], mode: 'lines', type: 'scatter',
          hoverinfo: 'skip', meta: 'edges', line: { color: 'rgba(207,34,46,0.55)', width: 1 + 5 * l[1] / wmax } });
      });
    }
    var hit = null;
    if (state.matches) {
      hit = {};
      state.matches.forEach(function (i) { hit[N.c[i]] = 1; });
    }
    traces.push({ x: idx.map(function (c) { return C.x[c]; }), y: idx.map(function (c) { return C.y[c]; }),
      customdata: idx, mode: 'markers', type: 'scatter', hoverinfo: 'none', meta: 'communities',
      marker: { size: idx.map(function () { return 6; }), sizemode: 'diameter', color: idx.map(commColor),
        opacity: idx.map(function (c) { return hit && !hit[c] ? 0.15 : 0.8; }),
        line: { width: idx.map(function (c) { return c === state.selComm ? 3 : 1; }),
          color: idx.map(function (c) { return c === state.selComm ? '#cf222e' : '#ffffff'; }) } } });
    // labels of every community; sizeCircles() shows those whose circle is large enough to hold one
    traces.push({ x: idx.map(function (c) { return C.x[c]; }), y: idx.map(function (c) { return C.y[c]; }),
      text: idx.map(function () { return ''; }), customdata: idx,
      mode: 'text', type: 'scatter', textfont: { size: 11, color: '#1f2328' }, hoverinfo: 'none',
      meta: 'clabels', cliponaxis: false });
    return { traces: traces, shown: nComm, edges: 0 };
  }

  function pathView() {  // the path as a chain, left to right, each link with its kind and direction
    var p = state.path, pe = state.pathEdges, px = {}, py = {};
    p.forEach(function (i, k) { px[i] = k * 3; py[i] = (k % 2) * 0.8; });
    var traces = [edgeTrace(pe, function (i) { return px[i]; }, function (i) { return py[i]; }, true,
      'rgba(207,34,46,0.8)', 2)];
    traces.push({ x: pe.map(function (k) { return (px[E.s[k]] + px[E.t[k]]) / 2; }),
      y: pe.map(function (k) { return (py[E.s[k]] + py[E.t[k]]) / 2 - 0.35; }),
      text: pe.map(function (k) { return esc(D.edgeKinds[E.k[k]]); }), mode: 'text', type: 'scatter',
      hoverinfo: 'skip', meta: 'edges', textfont: { size: 10, color: '#9a1b24' } });
    traces.push({ x: p.map(function (i) { return px[i]; }), y: p.map(function (i) { return py[i]; }),
      customdata: p, mode: 'markers+text', type: 'scatter', hoverinfo: 'none', meta: 'nodes', cliponaxis: false,
      text: p.map(function (i) { return esc(qname(i)) + '<br>' + esc(kindOf(i)); }),
      textposition: p.map(function (i, k) { return k % 2 ? 'top center' : 'bottom center'; }),
      marker: { size: 14, color: p.map(nodeColor), symbol: p.map(function (i) {
        return kindOf(i) === 'file' ? 'diamond' : 'circle'; }), line: { width: 1, color: '#fff' } } });
    return { traces: traces, shown: p.length, edges: pe.length };
  }

  // ------------------------------------------------------------------ drawing
  var drawn = null;
  function draw() {
    hideTip();
    var notes = (D.notes || []).slice(), v, idx;
    if (state.view === 'map') { v = mapView(); }
    else if (state.view === 'community') { v = nodesView(getMembers()[state.community], notes); }
    else if (state.view === 'path' && state.path) { v = pathView(); }
    else {
      idx = [];
      for (var i = 0; i < nNodes; i++) { idx.push(i); }
      v = nodesView(idx, notes);
    }
    var layout = { margin: { l: 10, r: 10, t: 10, b: 10 }, showlegend: false, dragmode: 'pan', hovermode: 'closest',
      plot_bgcolor: '#ffffff', paper_bgcolor: '#ffffff', uirevision: state.view + ':' + state.community,
      xaxis: { visible: false, zeroline: false, showgrid: false },
      yaxis: { visible: false, zeroline: false, showgrid: false, scaleanchor: 'x', scaleratio: 1 } };
    if (state.view === 'map') {  // fixed ranges: marker sizes must not feed back into autorange
      var x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
      for (var c = 0; c < nComm; c++) {
        x0 = Math.min(x0, C.x[c] - C.r[c]); x1 = Math.max(x1, C.x[c] + C.r[c]);
        y0 = Math.min(y0, C.y[c] - C.r[c]); y1 = Math.max(y1, C.y[c] + C.r[c]);
      }
      var pad = 0.03 * Math.max(x1 - x0, y1 - y0);
      layout.xaxis.range = [x0 - pad, x1 + pad];
      layout.yaxis.range = [y0 - pad, y1 + pad];
      layout.xaxis.autorange = false;
      layout.yaxis.autorange = false;
    }
    var status = document.getElementById('np-status');
    var what = state.view === 'map' ? fmt(v.shown) + ' communities (circle area: nodes) — click one, click again to open it'
      : fmt(v.shown) + ' nodes, ' + fmt(v.edges) + ' edges';
    status.textContent = [what].concat(notes).join(' · ');
    renderCrumbs();
    var done = Plotly.react(plot, v.traces, layout,
      { displaylogo: false, responsive: true, scrollZoom: true, modeBarButtonsToRemove: ['select2d', 'lasso2d'] });
    drawn = state.view;
    return done.then(function () { if (state.view === 'map') { sizeCircles(); } });
  }

  function sizeCircles() {  // circle markers as large as the communities' packed discs, at this zoom
    var fl = plot._fullLayout;
    if (!fl || !fl.xaxis || state.view !== 'map') { return; }
    var xr = fl.xaxis.range, ppu = fl.xaxis._length / Math.abs(xr[1] - xr[0]);
    var k = plot.data.findIndex(function (t) { return t.meta === 'communities'; });
    if (k < 0) { return; }
    var sizes = plot.data[k].customdata.map(function (c) { return Math.max(5, 2 * C.r[c] * ppu); });
    var kl = plot.data.findIndex(function (t) { return t.meta === 'clabels'; });
    var text = plot.data[kl].customdata.map(function (c) {
      var d = 2 * C.r[c] * ppu, room = Math.floor(d * 0.9 / 6.2);  // characters that fit across
      if (d < 46 || room < 7) { return ''; }
      return [C.name[c], C.where[c], fmt(C.size[c]) + ' nodes'].map(function (line) {
        return esc(line.length > room ? line.slice(0, room - 1) + '…' : line);
      }).join('<br>');
    });
    Plotly.restyle(plot, { 'marker.size': [sizes] }, [k]);
    Plotly.restyle(plot, { text: [text] }, [kl]);
  }

  // ------------------------------------------------------------------ navigation
  function renderCrumbs() {
    var nav = document.getElementById('np-crumbs');
    clear(nav);
    function crumb(text, view, active, fn) {
      var b = button(text, fn || function () { state.view = view; state.community = -1; draw(); });
      if (active) { b.className = 'np-current'; }
      nav.appendChild(b);
    }
    if (D.kind === 'graph' && nComm) { crumb('Community map', 'map', state.view === 'map'); }
    crumb('All nodes', 'all', state.view === 'all');
    if (state.community >= 0) {
      crumb('Community: ' + C.label[state.community], 'community', state.view === 'community',
        function () { openCommunity(state.community); });
    }
    if (state.path) { crumb('Path', 'path', state.view === 'path'); }
  }

  function openCommunity(c) {
    state.view = 'community';
    state.community = c;
    state.selComm = c;
    return draw();
  }

  function selectNode(i, move) {
    state.selected = i;
    if (move !== false) {
      if (D.kind === 'graph' && nComm && (state.view === 'map' || state.view === 'path' ||
          (state.view === 'community' && N.c[i] !== state.community))) {
        state.view = 'community';
        state.community = N.c[i];
      }
      if (state.hideKinds[N.kind[i]]) { delete state.hideKinds[N.kind[i]]; syncFilters(); }
      if (state.hideLangs[N.lang[i]]) { delete state.hideLangs[N.lang[i]]; syncFilters(); }
    }
    showNode(i);
    return draw();
  }

  // ------------------------------------------------------------------ details
  var details = document.getElementById('np-details');
  function kv(box, key, value) {
    if (value === '' || value === null || value === undefined) { return; }
    box.appendChild(el('span', '', key));
    box.appendChild(el('span', '', value));
  }
  function nodeLink(i, text) {
    return button(text || qname(i), function () { selectNode(i); }, 'np-link');
  }

  function showNode(i) {
    clear(details);
    details.appendChild(el('div', 'np-muted', kindOf(i)));
    details.appendChild(el('h2', '', qname(i)));
    var box = el('div', 'np-kv');
    kv(box, 'file', fileOf(i));
    if (kindOf(i) !== 'file') { kv(box, 'lines', N.start[i] ? N.start[i] + '–' + N.end[i] : ''); }
    kv(box, 'language', langOf(i));
    if (nComm && D.kind !== 'dependencies') { kv(box, 'community', C.label[N.c[i]]); }
    if (D.groups) { kv(box, 'status', D.groups.names[D.groups.of[i]]); }
    if (D.distance) { kv(box, 'hops', D.distance[i]); }
    details.appendChild(box);
    var row = el('div', 'np-row');
    row.appendChild(button('Path from here', function () { setEnd('from', i); }));
    row.appendChild(button('Path to here', function () { setEnd('to', i); }));
    if (nComm && D.kind === 'graph' && !(state.view === 'community' && state.community === N.c[i])) {
      row.appendChild(button('Open its community', function () { openCommunity(N.c[i]); }));
    }
    details.appendChild(row);
    if (N.sig[i]) { details.appendChild(el('h3', '', 'Signature')); details.appendChild(el('pre', '', N.sig[i])); }
    if (N.doc[i]) { details.appendChild(el('h3', '', 'Docstring')); details.appendChild(el('pre', '', N.doc[i])); }
    var mems = (D.touch && D.touch[i]) || [];
    details.appendChild(el('h3', '', 'Decisions touching it (' + mems.length + ')'));
    if (!mems.length) {
      details.appendChild(el('div', 'np-muted', D.memories && D.memories.length ? 'None.'
        : 'None recorded (no decision memory, or none touches this code).'));
    }
    mems.forEach(function (j) {
      var m = D.memories[j], d = el('div', 'np-memory' + (m.current ? '' : ' np-old'));
      d.appendChild(el('div', '', m.content));
      if (m.rationale) { d.appendChild(el('div', 'np-muted', 'Why: ' + m.rationale)); }
      d.appendChild(el('div', 'np-muted', m.kind + ' · ' + String(m.valid_from).slice(0, 10) +
        (m.current ? '' : ' · no longer current')));
      details.appendChild(d);
    });
    var a = getAdj(), rows = [];
    for (var p = a.out.start[i]; p < a.out.start[i + 1]; p++) { rows.push([a.out.list[p], 'out']); }
    for (p = a.inn.start[i]; p < a.inn.start[i + 1]; p++) { rows.push([a.inn.list[p], 'in']); }
    details.appendChild(el('h3', '', 'Links (' + rows.length + ')'));
    var ul = el('ul');
    rows.slice(0, 60).forEach(function (r) {
      var k = r[0], other = r[1] === 'out' ? E.t[k] : E.s[k], li = el('li');
      li.appendChild(el('span', 'np-edge', r[1] === 'out' ? D.edgeKinds[E.k[k]] + ' → ' : '← ' + D.edgeKinds[E.k[k]] + ' '));
      li.appendChild(nodeLink(other));
      ul.appendChild(li);
    });
    details.appendChild(ul);
    if (rows.length > 60) { details.appendChild(el('div', 'np-muted', '… and ' + (rows.length - 60) + ' more')); }
  }

  function showCommunity(c) {
    clear(details);
    details.appendChild(el('div', 'np-muted', C.loose[c] ? 'files linked to nothing, by folder' : 'community'));
    details.appendChild(el('h2', '', C.label[c]));
    var box = el('div', 'np-kv');
    kv(box, 'nodes', fmt(C.size[c]));
    kv(box, 'files', fmt(C.files[c]));
    details.appendChild(box);
    details.appendChild(button('Open this community', function () { openCommunity(c); }));
    details.appendChild(el('h3', '', 'Folders'));
    var ul = el('ul');
    C.folders[c].forEach(function (f) { ul.appendChild(el('li', '', f[0] + '/ — ' + fmt(f[1]) + ' nodes')); });
    details.appendChild(ul);
    if (C.top[c].length) {
      details.appendChild(el('h3', '', 'Best connected'));
      ul = el('ul');
      C.top[c].forEach(function (i) { var li = el('li'); li.appendChild(nodeLink(i)); ul.appendChild(li); });
      details.appendChild(ul);
    }
    if (C.links[c].length) {
      details.appendChild(el('h3', '', 'Most linked communities'));
      ul = el('ul');
      C.links[c].forEach(function (l) {
        var li = el('li');
        li.appendChild(button(C.label[l[0]], function () { state.selComm = l[0]; showCommunity(l[0]); draw(); },
          'np-link'));
        li.appendChild(el('span', 'np-muted', ' ' + fmt(l[1]) + ' edges'));
        ul.appendChild(li);
      });
      details.appendChild(ul);
    }
  }

  // ------------------------------------------------------------------ plot events
  function wire() {
    plot.on('plotly_click', function (ev) {
      var pt = ev && ev.points && ev.points[0];
      if (!pt || pt.customdata === undefined) { return; }
      var meta = pt.data.meta;
      if (meta === 'communities' || meta === 'clabels') {
        var c = pt.customdata;
        if (state.selComm === c) { openCommunity(c); return; }
        state.selComm = c;
        showCommunity(c);
        draw();
      } else if (meta === 'nodes' || meta === 'labels') {
        selectNode(pt.customdata, false);
      }
    });
    plot.on('plotly_hover', function (ev) {
      var pt = ev && ev.points && ev.points[0];
      if (!pt || pt.customdata === undefined) { return; }
      var meta = pt.data.meta, e = ev.event;
      if (meta === 'communities' || meta === 'clabels') {
        var c = pt.customdata;
        showTip(e, [C.label[c], fmt(C.size[c]) + ' nodes in ' + fmt(C.files[c]) + ' files']);
      } else if (meta === 'nodes' || meta === 'labels') {
        var i = pt.customdata;
        showTip(e, [kindOf(i) + ' ' + qname(i), where(i), N.sig[i] ? N.sig[i].split('\n')[0] : '']);
      }
    });
    plot.on('plotly_unhover', hideTip);
    plot.on('plotly_relayout', function () { if (state.view === 'map') { sizeCircles(); } });
  }

  // ------------------------------------------------------------------ search
  var searchBox = document.getElementById('np-search'), results = document.getElementById('np-results');
  var TEST_PATH = /(^|\/)(tests?|testing)(\/|_)|(^|\/)test_[^/]*$|_tests?\.py$/;
  function search(q) {
    var raw = q.trim();
    q = raw.toLowerCase();
    if (!q) { return []; }
    if (!lower) {
      lower = { name: N.name.map(function (s) { return s.toLowerCase(); }),
        qn: N.qn.map(function (s) { return s.toLowerCase(); }),
        file: D.files.map(function (s) { return s.toLowerCase(); }) };
    }
    var hits = [];
    for (var i = 0; i < nNodes; i++) {
      if (!visible(i)) { continue; }
      var n = lower.name[i], qn = lower.qn[i] || n, score = -1;
      if (N.name[i] === raw || N.qn[i] === raw) { score = 0; }  // exactly as typed first
      else if (n === q || qn === q) { score = 1; }
      else if (qn.slice(-q.length - 1) === '.' + q) { score = 2; }
      else if (n.indexOf(q) === 0) { score = 3; }
      else if (qn.indexOf(q) >= 0) { score = 4; }
      else if (kindOf(i) === 'file' && lower.file[N.file[i]].indexOf(q) >= 0) { score = 5; }
      if (score < 0) { continue; }
      var k = kindOf(i), rank = k === 'class' || k === 'function' ? 0 : k === 'file' ? 1 : 2;
      var test = TEST_PATH.test(lower.file[N.file[i]]) ? 1 : 0;
      hits.push([score, test, rank, N.name[i].length, i]);
    }
    hits.sort(function (a, b) { return a[0] - b[0] || a[1] - b[1] || a[2] - b[2] || a[3] - b[3] || a[4] - b[4]; });
    return hits.map(function (h) { return h[4]; });
  }
  function runSearch() {
    var q = searchBox.value, found = search(q);
    clear(results);
    state.matches = q.trim() ? new Set(found.slice(0, 2000)) : null;
    found.slice(0, 50).forEach(function (i) {
      var li = el('li'), b = button('', function () { selectNode(i); }, 'np-hit');
      b.appendChild(el('span', 'np-name', qname(i)));
      b.appendChild(el('span', 'np-where', kindOf(i) + ' · ' + where(i)));
      li.appendChild(b);
      li.appendChild(button('from', function () { setEnd('from', i); }));
      li.appendChild(button('to', function () { setEnd('to', i); }));
      results.appendChild(li);
    });
    results.setAttribute('data-query', q);  // which query the list answers (tests wait for it)
    if (q.trim()) {
      results.appendChild(el('li', 'np-muted', found.length ? fmt(found.length) + ' match(es)' +
        (found.length > 50 ? ', first 50 listed' : '') : 'No match.'));
    }
    draw();
  }
  var timer = null;
  searchBox.addEventListener('input', function () { clearTimeout(timer); timer = setTimeout(runSearch, 150); });
  searchBox.addEventListener('keydown', function (e) {
    if (e.key === 'Enter') { clearTimeout(timer); runSearch(); var first = search(searchBox.value)[0];
      if (first !== undefined) { selectNode(first); } }
  });

  // ------------------------------------------------------------------ path finder
  function setEnd(which, i) {
    state[which] = i;
    document.getElementById(which === 'from' ? 'np-path-from' : 'np-path-to').textContent = qname(i);
    if (state.from >= 0 && state.to >= 0) { findPath(); }
  }
  function bfs(a, b, directed) {
    var adjs = getAdj(), prev = new Int32Array(nNodes).fill(-2), via = new Int32Array(nNodes).fill(-1);
    var queue = new Int32Array(nNodes), head = 0, tail = 0;
    prev[a] = -1; queue[tail++] = a;
    while (head < tail) {
      var i = queue[head++];
      if (i === b) { break; }
      var sides = directed ? [adjs.out] : [adjs.out, adjs.inn];
      for (var s = 0; s < sides.length; s++) {
        var side = sides[s];
        for (var p = side.start[i]; p < side.start[i + 1]; p++) {
          var k = side.list[p], j = side === adjs.out ? E.t[k] : E.s[k];
          if (prev[j] === -2) { prev[j] = i; via[j] = k; queue[tail++] = j; }
        }
      }
    }
    if (prev[b] === -2) { return null; }
    var nodes = [], edges = [];
    for (var x = b; x !== -1; x = prev[x]) { nodes.push(x); if (via[x] >= 0) { edges.push(via[x]); } }
    return { nodes: nodes.reverse(), edges: edges.reverse() };
  }
  function findPath() {
    var out = document.getElementById('np-path-result');
    clear(out);
    if (state.from < 0 || state.to < 0) {
      out.appendChild(el('div', 'np-muted', 'Pick two nodes: "Path from here" / "Path to here" in a node\'s details, ' +
        'or "from" / "to" next to a search result.'));
      return;
    }
    var directed = document.getElementById('np-path-directed').checked;
    var found = bfs(state.from, state.to, directed);
    if (!found) {
      state.path = null;
      out.appendChild(el('div', 'np-note', 'No path from ' + qname(state.from) + ' to ' + qname(state.to) +
        (directed ? ' following edge direction.' : '.')));
      draw();
      return;
    }
    state.path = found.nodes;
    state.pathEdges = found.edges;
    out.appendChild(el('div', '', (found.nodes.length - 1) + ' step(s):'));
    var ol = el('ol');
    found.nodes.forEach(function (i, k) {
      var li = el('li');
      if (k > 0) {
        var e = found.edges[k - 1], fwd = E.t[e] === i;
        li.appendChild(el('span', 'np-edge', fwd ? D.edgeKinds[E.k[e]] + ' → ' : '← ' + D.edgeKinds[E.k[e]] + ' '));
      }
      li.appendChild(nodeLink(i));
      ol.appendChild(li);
    });
    out.appendChild(ol);
    state.view = 'path';
    draw();
  }
  document.getElementById('np-path-find').addEventListener('click', findPath);
  document.getElementById('np-path-clear').addEventListener('click', function () {
    state.from = state.to = -1; state.path = state.pathEdges = null;
    document.getElementById('np-path-from').textContent = '—';
    document.getElementById('np-path-to').textContent = '—';
    clear(document.getElementById('np-path-result'));
    if (state.view === 'path') { state.view = D.start; }
    draw();
  });

  // ------------------------------------------------------------------ filters and colours
  var colorSel = document.getElementById('np-color');
  function option(value, text) { var o = el('option', '', text); o.value = value; colorSel.appendChild(o); }
  if (D.groups) { option('group', 'status'); }
  if (nComm && D.kind !== 'dependencies') { option('community', 'community'); }
  option('kind', 'kind');
  option('language', 'language');
  colorSel.value = state.colorBy;
  colorSel.addEventListener('change', function () { state.colorBy = colorSel.value; legend(); draw(); });
  function legend() {
    var box = document.getElementById('np-legend');
    clear(box);
    var items = [];
    if (state.colorBy === 'kind') { D.kinds.forEach(function (k) { items.push([KIND_COLORS[k] || '#888', k]); }); }
    else if (state.colorBy === 'language') {
      D.langs.forEach(function (l, k) { items.push([PALETTE[k % PALETTE.length], l || '(none)']); });
    } else if (state.colorBy === 'group' && D.groups) {
      D.groups.names.forEach(function (n, k) { items.push([D.groups.colors[k], n]); });
    } else { box.appendChild(el('div', 'np-muted', 'One colour per community; grey: files linked to nothing.')); }
    items.forEach(function (it) {
      var d = el('div'), sw = el('span', 'np-swatch');
      sw.style.background = it[0];
      d.appendChild(sw);
      d.appendChild(document.createTextNode(it[1]));
      box.appendChild(d);
    });
  }
  function counts(field, n) {
    var out = new Array(n).fill(0);
    for (var i = 0; i < nNodes; i++) { out[N[field][i]]++; }
    return out;
  }
  var checks = { kind: [], lang: [] };
  function filterBox(id, names, field, hidden, list) {
    var box = document.getElementById(id), cnt = counts(field, names.length);
    names.forEach(function (name, k) {
      var lab = el('label', 'np-check'), cb = el('input');
      cb.type = 'checkbox'; cb.checked = true; cb.value = String(k);
      cb.addEventListener('change', function () {
        if (cb.checked) { delete hidden[k]; } else { hidden[k] = 1; }
        if (searchBox.value.trim()) { runSearch(); } else { draw(); }
      });
      lab.appendChild(cb);
      lab.appendChild(document.createTextNode(name || '(none)'));
      lab.appendChild(el('span', 'np-count', fmt(cnt[k])));
      box.appendChild(lab);
      list.push(cb);
    });
  }
  function syncFilters() {
    checks.kind.forEach(function (cb) { cb.checked = !state.hideKinds[cb.value]; });
    checks.lang.forEach(function (cb) { cb.checked = !state.hideLangs[cb.value]; });
  }
  filterBox('np-kinds', D.kinds, 'kind', state.hideKinds, checks.kind);
  filterBox('np-langs', D.langs, 'lang', state.hideLangs, checks.lang);
  legend();

  // ------------------------------------------------------------------ start
  document.getElementById('np-title').textContent = D.title;
  document.getElementById('np-sub').textContent = D.subtitle;
  if (!nComm || D.kind !== 'graph') { if (state.view === 'map') { state.view = 'all'; } }
  if (D.targets && D.targets.length) { showNode(D.targets[0]); state.selected = D.targets[0]; }

  // for tests and embedding pages: where a node is drawn now (client pixels), and a few actions
  window.nervapack = {
    data: D, state: state, select: selectNode, startedAt: startedAt, parsedAt: parsedAt, openCommunity: openCommunity, search: search,
    pointOf: function (i) {
      var fl = plot._fullLayout, r = plot.getBoundingClientRect();
      return { x: r.left + fl._size.l + fl.xaxis.l2p(N.x[i]), y: r.top + fl._size.t + fl.yaxis.l2p(N.y[i]) };
    },
    communityPoint: function (c) {
      var fl = plot._fullLayout, r = plot.getBoundingClientRect();
      return { x: r.left + fl._size.l + fl.xaxis.l2p(C.x[c]), y: r.top + fl._size.t + fl.yaxis.l2p(C.y[c]) };
    }
  };
  draw().then(function () {
    wire();
    document.documentElement.setAttribute('data-ready', '1');
    window.nervapack.readyAt = performance.now();
  });
})();
