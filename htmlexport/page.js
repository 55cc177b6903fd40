// The page's script: the tree and the conversation are virtual lists over
// the data Prime wrote; only the rows and blocks in view are elements.
// primeTiming records when each step of opening ended, in milliseconds
// since the navigation (read by BenchmarkBrowser100k).
const primeTiming = { start: performance.now() };

// A large page holds its data compressed (gzip in base64).
async function primeData() {
  'use strict';
  const el = document.getElementById('data');
  if (el.type === 'application/json') return JSON.parse(el.textContent);
  const b64 = atob(el.textContent);
  primeTiming.atob = performance.now();
  const bytes = new Uint8Array(b64.length);
  for (let i = 0; i < b64.length; i++) bytes[i] = b64.charCodeAt(i);
  primeTiming.bytes = performance.now();
  const text = await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).text();
  primeTiming.inflated = performance.now();
  // The data's JSON is the first line; the blocks follow it as one text,
  // cut by the offsets (in UTF-16 units) only when a block is drawn.
  const nl = text.indexOf('\n');
  const d = JSON.parse(text.substring(0, nl));
  d.blocks = text.substring(nl + 1);
  primeTiming.json = performance.now();
  return d;
}

primeData().then(function (D) {
  'use strict';
  const timing = primeTiming;
  timing.parsed = performance.now();
  const N = D.ids.length;
  const F = { label: 1, pin: 2, summary: 4, compact: 8, branch: 16, leaf: 32, hidden: 64 };
  const $ = (id) => document.getElementById(id);
  const html = D.html ? (r) => D.html[r] : (r) => D.blocks.substring(D.off[r], D.off[r + 1]);

  // Rows by id (the last of a repeated id wins, as in the session) and
  // subtree sizes: in depth-first order a subtree is rows r .. r+size-1,
  // its last row the newest leaf under r.
  const rowById = new Map();
  for (let i = 0; i < N; i++) rowById.set(D.ids[i], i);
  const size = new Int32Array(N).fill(1);
  for (let i = N - 1; i > 0; i--) if (D.par[i] >= 0) size[D.par[i]] += size[i];

  const state = { leaf: D.leaf, target: -1, onPath: new Uint8Array(N), path: [], pos: new Int32Array(N).fill(-1),
    items: [], gone: null, flash: null, toolsOpen: false, thinkOpen: false };

  // ---- the conversation: a virtual list with measured heights ----
  const conv = $('conv'), convInner = $('conv-inner');
  let heights = new Float64Array(0), fen = new Float64Array(1);
  const els = new Map();
  let lock = false;

  function fenBuild() {
    const n = heights.length;
    fen = new Float64Array(n + 1);
    for (let i = 1; i <= n; i++) {
      fen[i] += heights[i - 1];
      const j = i + (i & -i);
      if (j <= n) fen[j] += fen[i];
    }
  }
  function fenAdd(i, d) { for (i++; i < fen.length; i += i & -i) fen[i] += d; }
  function before(i) { let s = 0; for (; i > 0; i -= i & -i) s += fen[i]; return s; }
  function itemAt(y) {
    let pos = 0, step = 1;
    while (step * 2 < fen.length) step *= 2;
    for (; step > 0; step >>= 1) {
      if (pos + step < fen.length && fen[pos + step] <= y) { pos += step; y -= fen[pos]; }
    }
    return Math.min(pos, state.items.length - 1);
  }
  function estimate(row) {
    const h = html(row);
    if (D.kind[row] === 'n') return 26;
    return 64 + Math.min(h.length, 6000) / 7;
  }

  const ro = new ResizeObserver((entries) => {
    let changed = false;
    const anchor = anchorNow();
    for (const e of entries) {
      const i = +e.target.dataset.i;
      if (els.get(i) !== e.target) continue;
      const h = e.target.offsetHeight;
      if (h > 0 && Math.abs(h - heights[i]) > 0.5) { fenAdd(i, h - heights[i]); heights[i] = h; changed = true; }
    }
    if (changed) { place(); restore(anchor); }
  });

  function anchorNow() {
    if (!state.items.length) return null;
    const top = conv.scrollTop, i = itemAt(top);
    return { i: i, off: top - before(i) };
  }
  function restore(a) {
    if (!a) return;
    const want = Math.max(0, before(a.i) + a.off);
    if (Math.abs(conv.scrollTop - want) > 0.5) { lock = true; conv.scrollTop = want; lock = false; }
  }

  function makeItem(i) {
    const row = state.items[i];
    const el = document.createElement('div');
    el.className = 'item';
    el.dataset.i = i;
    el.dataset.row = row;
    let h = html(row);
    if (D.kind[row] === 'r') h = '<div class="blk k-r"><div class="hd"><span class="who">Tool result</span></div>' + h + '</div>';
    el.innerHTML = h;
    if (state.gone && state.gone[i]) { el.classList.add('gone'); el.dataset.gone = 'summarized by compaction #' + state.gone[i]; }
    if (state.flash && i >= state.flash[0] && i < state.flash[1]) el.classList.add('flash');
    for (const t of el.querySelectorAll('details.tool')) {
      const r = state.results.get(row + ':' + t.dataset.call);
      if (r !== undefined) {
        const out = html(r);
        t.querySelector('.out').innerHTML = out;
        t.querySelector('.st').classList.add(out.indexOf('class="res bad"') >= 0 ? 'bad' : 'ok');
      }
      if (state.toolsOpen) t.open = true;
    }
    if (state.thinkOpen) for (const t of el.querySelectorAll('details.think')) t.open = true;
    return el;
  }

  function place() {
    convInner.style.height = before(state.items.length) + 'px';
    for (const [i, el] of els) el.style.top = before(i) + 'px';
  }

  function render() {
    const n = state.items.length;
    const top = conv.scrollTop, bottom = top + conv.clientHeight;
    let first = 0, last = 0;
    if (n > 0) {
      first = itemAt(Math.max(0, top - 800));
      last = first;
      let y = before(first);
      while (last < n && y < bottom + 800) { y += heights[last]; last++; }
    }
    for (const [i, el] of els) {
      if (i < first || i >= last) { ro.unobserve(el); el.remove(); els.delete(i); }
    }
    const added = [];
    for (let i = first; i < last; i++) {
      if (els.has(i)) continue;
      const el = makeItem(i);
      convInner.appendChild(el);
      els.set(i, el);
      added.push(el);
    }
    if (added.length) {
      const anchor = anchorNow();
      for (const el of added) {
        const i = +el.dataset.i, h = el.offsetHeight;
        if (h > 0 && h !== heights[i]) { fenAdd(i, h - heights[i]); heights[i] = h; }
        ro.observe(el);
      }
      place();
      restore(anchor);
    } else {
      place();
    }
  }
  let pending = false;
  conv.addEventListener('scroll', () => {
    if (lock || pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; render(); });
  }, { passive: true });
  window.addEventListener('resize', () => { render(); renderTree(); });

  // jump scrolls the conversation to item i (a few rounds: measuring the
  // blocks that come into view moves it).
  function jump(i, flashTo, quiet) {
    if (i < 0 || i >= state.items.length) return;
    state.flash = quiet ? null : flashTo !== undefined ? [i, Math.max(flashTo, i + 1)] : [i, i + 1];
    for (const [k, el] of els) el.classList.toggle('flash', !!state.flash && k >= state.flash[0] && k < state.flash[1]);
    for (let round = 0; round < 4; round++) {
      const want = Math.max(0, before(i) - 24);
      lock = true; conv.scrollTop = want; lock = false;
      render();
      if (Math.abs(conv.scrollTop - Math.max(0, before(i) - 24)) < 1) break;
    }
    const flash = state.flash;
    if (!flash) return;
    setTimeout(() => {
      if (state.flash !== flash) return;
      state.flash = null;
      for (const el of els.values()) el.classList.remove('flash');
    }, 2500);
  }

  // itemOfRow is the conversation item showing row, or the nearest one
  // before it on the path.
  function itemOfRow(row) {
    let p = state.pos[row];
    if (p < 0) return -1;
    for (; p >= 0; p--) {
      const r = state.path[p], i = state.itemAt.get(r);
      if (i !== undefined) return i;
      const owner = state.resultOwner.get(r);
      if (owner !== undefined) return owner;
    }
    return 0;
  }

  // ---- the branch shown ----
  function setPath(leaf) {
    state.leaf = leaf;
    for (const r of state.path) { state.onPath[r] = 0; state.pos[r] = -1; }
    const path = [];
    for (let r = leaf; r >= 0; r = D.par[r]) path.push(r);
    path.reverse();
    state.path = path;
    path.forEach((r, p) => { state.onPath[r] = 1; state.pos[r] = p; });
    // A tool result goes into its call's block: the reply before it on the
    // path (past the other results), when that reply made the call.
    state.results = new Map();
    const items = [], itemAt = new Map(), resultOwner = new Map();
    for (let p = 0; p < path.length; p++) {
      const r = path[p], k = D.kind[r];
      if (!k) continue;
      if (k === 'r' && D.calls[r] !== undefined) {
        let q = p - 1;
        while (q >= 0 && (D.kind[path[q]] === 'r' || D.calls[path[q]] !== undefined)) q--;
        const owner = q >= 0 ? path[q] : -1, key = owner + ':' + D.calls[r];
        if (owner >= 0 && D.kind[owner] === 'a' && html(owner).indexOf('data-call="' + esc(D.calls[r]) + '"') >= 0 && !state.results.has(key)) {
          state.results.set(key, r);
          resultOwner.set(r, owner);
          continue;
        }
      }
      itemAt.set(r, items.length);
      items.push(r);
    }
    for (const [r, owner] of resultOwner) resultOwner.set(r, itemAt.get(owner));
    state.items = items;
    state.itemAt = itemAt;
    state.resultOwner = resultOwner;
    // What each compaction on the path replaced.
    state.gone = new Int32Array(items.length);
    for (const r of path) {
      const c = D.comp[r];
      if (!c || c.from < 0 || state.pos[c.from] < 0) continue;
      for (let p = state.pos[c.from]; p < state.pos[c.kept]; p++) {
        const i = itemAt.get(path[p]);
        if (i !== undefined && !state.gone[i]) state.gone[i] = c.num;
      }
    }
    heights = new Float64Array(items.length);
    for (let i = 0; i < items.length; i++) heights[i] = estimate(items[i]);
    fenBuild();
    for (const el of els.values()) { ro.unobserve(el); el.remove(); }
    els.clear();
    const bar = $('branch-bar');
    const active = leaf === D.leaf;
    bar.innerHTML = (active ? 'Active branch' : 'Branch') + ' ending at <code>' + esc(D.ids[leaf] || '') + '</code> · ' +
      path.length.toLocaleString() + ' entries, ' + items.length.toLocaleString() + ' shown' +
      (active || D.leaf < 0 ? '' : ' <button type="button" id="back">back to the active branch</button>');
    const back = $('back');
    if (back) back.addEventListener('click', () => { showRow(D.leaf, true); });
    renderTree();
  }

  // esc escapes as Go's html.EscapeString does.
  function esc(s) { return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&#34;', "'": '&#39;' })[c]); }

  // showRow shows the branch through row (the newest leaf under it, or the
  // branch shown when row is on it) and scrolls to row.
  function showRow(row, keepLeaf) {
    if (row < 0 || row >= N) return;
    if (!state.onPath[row] || keepLeaf === false) setPath(keepLeaf === true ? row : row + size[row] - 1);
    state.target = row;
    renderTree();
    scrollTreeTo(row);
    jump(itemOfRow(row));
  }

  // ---- the tree: a virtual list of fixed rows ----
  const tree = $('tree'), treeInner = $('tree-inner');
  const ROW = 22;
  treeInner.style.height = (N * ROW) + 'px';
  $('tree-status').textContent = N.toLocaleString() + ' entries';
  const rowEls = new Map();
  function treeRow(r) {
    const el = document.createElement('div');
    el.dataset.r = r;
    const f = D.flags[r];
    let glyph = '';
    if (f & F.branch) glyph = '<span class="br">├ </span>';
    el.innerHTML = '<span class="dot"></span>' + glyph + D.tree[r];
    el.style.top = (r * ROW) + 'px';
    el.style.paddingLeft = (6 + Math.min(D.depth[r], 16) * 8) + 'px';
    return el;
  }
  function classify(el, r) {
    const f = D.flags[r];
    let c = 'row';
    if (state.onPath[r]) c += ' on';
    if (r === state.target) c += ' cur';
    if (f & F.compact) c += ' comp';
    if (f & F.summary) c += ' sum';
    if (f & F.pin) c += ' pin';
    if (f & F.hidden) c += ' hid';
    el.className = c;
    el.firstChild.textContent = state.onPath[r] ? '•' : '';
  }
  function renderTree() {
    const first = Math.max(0, Math.floor(tree.scrollTop / ROW) - 20);
    const last = Math.min(N, Math.ceil((tree.scrollTop + tree.clientHeight) / ROW) + 20);
    for (const [r, el] of rowEls) if (r < first || r >= last) { el.remove(); rowEls.delete(r); }
    for (let r = first; r < last; r++) {
      let el = rowEls.get(r);
      if (!el) { el = treeRow(r); treeInner.appendChild(el); rowEls.set(r, el); }
      classify(el, r);
    }
  }
  function scrollTreeTo(r) {
    const y = r * ROW;
    if (y < tree.scrollTop || y > tree.scrollTop + tree.clientHeight - ROW) tree.scrollTop = y - tree.clientHeight / 2;
    renderTree();
  }
  let treePending = false;
  tree.addEventListener('scroll', () => {
    if (treePending) return;
    treePending = true;
    requestAnimationFrame(() => { treePending = false; renderTree(); });
  }, { passive: true });
  tree.addEventListener('click', (e) => {
    const el = e.target.closest('.row');
    if (!el) return;
    const r = +el.dataset.r;
    showRow(r, state.onPath[r] ? undefined : false);
  });

  // ---- links inside the conversation ----
  conv.addEventListener('click', (e) => {
    const a = e.target.closest('a');
    if (!a) return;
    if (a.dataset.jump !== undefined) {
      e.preventDefault();
      const from = +a.dataset.jump, until = a.dataset.until !== undefined ? +a.dataset.until : undefined;
      if (!state.onPath[from]) setPath(from + size[from] - 1);
      const i = itemOfRow(from);
      jump(i, until !== undefined ? itemOfRow(until) : undefined);
      state.target = from;
      renderTree();
      scrollTreeTo(from);
      return;
    }
    const href = a.getAttribute('href') || '';
    if (href.startsWith('#e-')) {
      e.preventDefault();
      const r = rowById.get(href.slice(3));
      if (r !== undefined) showRow(r, state.onPath[r] ? undefined : false);
    }
  });

  // ---- the chart ----
  const svg = $('ctx-chart'), tip = $('tip'), cursor = $('cursor');
  function nearest(x) {
    const P = D.points;
    let lo = 0, hi = P.length - 1;
    if (hi < 0) return -1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (P[mid][1] / 10 < x) lo = mid + 1; else hi = mid;
    }
    if (lo > 0 && Math.abs(P[lo - 1][1] / 10 - x) < Math.abs(P[lo][1] / 10 - x)) lo--;
    return lo;
  }
  function svgX(e) {
    const m = svg.getScreenCTM();
    if (!m) return 0;
    const pt = svg.createSVGPoint();
    pt.x = e.clientX; pt.y = e.clientY;
    return pt.matrixTransform(m.inverse()).x;
  }
  if (svg) {
    svg.addEventListener('mousemove', (e) => {
      const k = nearest(svgX(e));
      if (k < 0) return;
      const p = D.points[k];
      cursor.setAttribute('x1', p[1] / 10); cursor.setAttribute('x2', p[1] / 10);
      cursor.setAttribute('visibility', 'visible');
      tip.textContent = 'reply ' + (k + 1) + ': ' + p[4].toLocaleString('en-US') + ' tokens' + (p[3] ? '' : ' (estimated)') + ' · click to open';
      tip.hidden = false;
      const box = $('chart').getBoundingClientRect();
      tip.style.left = Math.min(e.clientX - box.left + 12, box.width - 220) + 'px';
      tip.style.top = (e.clientY - box.top + 12) + 'px';
    });
    svg.addEventListener('mouseleave', () => { tip.hidden = true; cursor.setAttribute('visibility', 'hidden'); });
    svg.addEventListener('click', (e) => {
      const drop = e.target.closest('.drop');
      let row;
      if (drop) row = +drop.dataset.row;
      else {
        const k = nearest(svgX(e));
        if (k < 0) return;
        row = D.points[k][0];
      }
      if (state.leaf !== D.leaf) setPath(D.leaf);
      showRow(row);
    });
  }

  // ---- header buttons ----
  function toggleAll(sel, open) {
    for (const el of els.values()) for (const d of el.querySelectorAll(sel)) d.open = open;
  }
  $('tog-tools').addEventListener('click', (e) => {
    state.toolsOpen = !state.toolsOpen;
    e.target.textContent = state.toolsOpen ? 'fold tools' : 'expand tools';
    toggleAll('details.tool', state.toolsOpen);
  });
  $('tog-think').addEventListener('click', (e) => {
    state.thinkOpen = !state.thinkOpen;
    e.target.textContent = state.thinkOpen ? 'fold thinking' : 'expand thinking';
    toggleAll('details.think', state.thinkOpen);
  });
  $('tog-chart').addEventListener('click', (e) => {
    const c = $('chart');
    c.classList.toggle('off');
    e.target.textContent = c.classList.contains('off') ? 'show chart' : 'hide chart';
    render();
  });

  // ---- start: the active branch, at the entry the address names or at
  // its end ----
  window.primeExport = { showRow: showRow, state: state, rowById: rowById, jump: jump, timing: timing, html: html, data: D };
  if (N === 0) { $('branch-bar').textContent = 'The session is empty.'; return; }
  setPath(D.leaf >= 0 ? D.leaf : N - 1);
  const m = /^#e-(.+)$/.exec(location.hash);
  const start = m ? rowById.get(decodeURIComponent(m[1])) : undefined;
  if (start !== undefined) showRow(start, state.onPath[start] ? undefined : false);
  else {
    jump(state.items.length - 1, undefined, true);
    if (state.items.length) { state.target = state.items[state.items.length - 1]; scrollTreeTo(state.target); }
  }
  timing.ready = performance.now();
  document.body.dataset.ready = '1';
});
