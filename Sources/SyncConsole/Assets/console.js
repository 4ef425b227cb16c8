// Anchorage operator console: a read-only, single-page view of accounts, devices, collections,
// records and live load, talking to the JSON API under /console/api (see the console contract).
//
// Security rules this file keeps (the page runs under a strict Content-Security-Policy):
// - The DOM is built with createElement / createElementNS / textContent / createTextNode only:
//   every string from the server is untrusted text and is never parsed as HTML.
// - No inline styles (element.style is never touched): classes, the `hidden` attribute and SVG attributes.
// - Credentials live in one variable of this closure, never in storage: a reload asks again.
(function () {
  'use strict';

  var PAGE_SIZE = 100;
  var SUMMARY_FIELDS = 3;
  var SUMMARY_CHARS = 80;
  var NETWORK_MESSAGE = 'The console could not reach the server. Check that it is running and try again.';

  var auth = null;        // "Basic …" header value, memory only
  var generation = 0;     // bumped on every navigation; late answers of an old view are dropped
  var stopView = null;    // stops the current view's timers
  var paging = null;      // {key, afters: [null, after1, …]}: the keyset-paging stack of one collection
  var prefetched = null;  // {path, body}: the record the search just fetched, used once by the record view

  function byId(id) { return document.getElementById(id); }

  // ---------------------------------------------------------------- DOM helpers (text only)

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    setAttrs(node, attrs);
    appendAll(node, children);
    return node;
  }

  function svgEl(tag, attrs) {
    var node = document.createElementNS('http://www.w3.org/2000/svg', tag);
    setAttrs(node, attrs);
    return node;
  }

  function setAttrs(node, attrs) {
    if (!attrs) return;
    Object.keys(attrs).forEach(function (key) {
      var value = attrs[key];
      if (value === null || value === undefined || value === false) return;
      if (key === 'text') node.textContent = String(value);
      else if (key === 'class') node.setAttribute('class', value);
      else node.setAttribute(key, value === true ? '' : String(value));
    });
  }

  function appendAll(node, children) {
    if (children === null || children === undefined) return;
    if (!Array.isArray(children)) children = [children];
    children.forEach(function (child) {
      if (child === null || child === undefined || child === false) return;
      node.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
    });
  }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

  function link(href, text, attrs) {
    var a = el('a', attrs, text);
    a.setAttribute('href', href);
    return a;
  }

  function table(id, columns, rows, emptyText) {
    var head = el('tr', null, columns.map(function (c) {
      return el('th', { scope: 'col', class: c.num ? 'num' : null }, c.title);
    }));
    var body = el('tbody');
    if (rows.length === 0) {
      body.appendChild(el('tr', { class: 'empty-row' }, el('td', { class: 'empty', colspan: columns.length }, emptyText)));
    } else {
      appendAll(body, rows);
    }
    var t = el('table', { id: id }, [el('thead', null, head), body]);
    t.setAttribute('data-rendered-at', String(Math.round(performance.now())));
    return t;
  }

  function td(text, cls, title) { return el('td', { class: cls, title: title }, text); }

  // ---------------------------------------------------------------- formatting

  function enc(part) { return encodeURIComponent(part); }

  function str(value) { return value === null || value === undefined ? '' : String(value); }

  function dash(value) { return value === null || value === undefined || value === '' ? '—' : String(value); }

  function number(value) {
    return typeof value === 'number' && isFinite(value) ? value.toLocaleString('en-US') : dash(value);
  }

  function bytes(value) {
    if (typeof value !== 'number' || !isFinite(value)) return dash(value);
    if (value < 1024) return value + ' B';
    var units = ['KB', 'MB', 'GB', 'TB'];
    var n = value, i = -1;
    do { n /= 1024; i++; } while (n >= 1024 && i < units.length - 1);
    return (n >= 100 ? n.toFixed(0) : n.toFixed(1)) + ' ' + units[i];
  }

  // A timestamp readable in local time, the ISO text in the tooltip.
  function timeCell(iso, cls) {
    var text = str(iso);
    var ms = Date.parse(text);
    var cell = el('td', { class: cls || 'nowrap' });
    if (!text) { cell.textContent = '—'; return cell; }
    cell.appendChild(el('time', { datetime: text, title: text }, isNaN(ms) ? text : new Date(ms).toLocaleString()));
    return cell;
  }

  function truncate(text, max) {
    var chars = Array.from(str(text).replace(/\s+/g, ' '));
    return chars.length > max ? chars.slice(0, max - 1).join('') + '…' : chars.join('');
  }

  function ms(value) {
    return typeof value === 'number' && isFinite(value) ? (value >= 100 ? value.toFixed(0) : value.toFixed(1)) : '—';
  }

  // Basic credentials: base64 of the UTF-8 bytes of "name:password".
  function basic(name, password) {
    var bytesOf = new TextEncoder().encode(name + ':' + password);
    var binary = '';
    for (var i = 0; i < bytesOf.length; i++) binary += String.fromCharCode(bytesOf[i]);
    return 'Basic ' + btoa(binary);
  }

  // ---------------------------------------------------------------- API

  function request(path, header) {
    return fetch(path, {
      headers: { 'Authorization': header, 'Accept': 'application/json' },
      credentials: 'omit',  // never the browser's own HTTP-auth cache or cookies, and no auth dialog
      cache: 'no-store'
    }).then(function (res) {
      return res.text().then(function (text) {
        var body = null;
        try { body = text ? JSON.parse(text) : null; } catch (e) { body = null; }
        return { status: res.status, ok: res.ok, body: body, headers: res.headers };
      });
    });
  }

  function messageOf(res, fallback) {
    var m = res && res.body && typeof res.body.message === 'string' ? res.body.message : '';
    return m || fallback || ('The server answered with HTTP ' + (res ? res.status : '?') + '.');
  }

  // GET for a view: resolves with the body, or null when the view should stop (stale view,
  // error shown, or back at the login). `quiet` keeps the loading state (the load view's refreshes).
  function get(path, gen, opts) {
    opts = opts || {};
    return request(path, auth).then(function (res) {
      if (gen !== generation) return null;
      if (res.status === 401) {
        signOut('Your sign-in is no longer accepted. Sign in again.');
        return null;
      }
      if (opts.allow && opts.allow.indexOf(res.status) >= 0) return res;
      if (!res.ok || !res.body) {
        showError(messageOf(res, res.ok ? 'The server sent an answer the console cannot read.' : null));
        return null;
      }
      return opts.raw ? res : res.body;
    }, function () {
      if (gen === generation) showError(NETWORK_MESSAGE);
      return null;
    });
  }

  function api(parts, query) {
    return '/console/api/' + parts.map(enc).join('/') + (query || '');
  }

  // ---------------------------------------------------------------- chrome: login, errors, crumbs

  function showError(message) {
    var box = byId('error');
    box.textContent = message;
    box.hidden = false;
    var loading = byId('loading');
    if (loading) loading.remove();
    byId('view').removeAttribute('aria-busy');
  }

  function hideError() {
    var box = byId('error');
    box.hidden = true;
    box.textContent = '';
  }

  function showLogin(message) {
    byId('login-view').hidden = false;
    byId('nav').hidden = true;
    byId('session').hidden = true;
    byId('crumbs').hidden = true;
    byId('view').hidden = true;
    clear(byId('view'));
    clear(byId('crumbs'));
    hideError();
    byId('login-error').textContent = message || '';
    byId('login-submit').disabled = false;
    document.title = 'Sign in · Anchorage console';
    if (!message) byId('login-name').focus();
  }

  function signOut(message) {
    auth = null;
    paging = null;
    prefetched = null;
    if (stopView) { stopView(); stopView = null; }
    generation++;
    byId('login-password').value = '';
    showLogin(message);
  }

  function showApp(account) {
    byId('login-view').hidden = true;
    byId('login-error').textContent = '';
    byId('nav').hidden = false;
    byId('session').hidden = false;
    byId('whoami').textContent = account;
    byId('crumbs').hidden = false;
    byId('view').hidden = false;
  }

  function onLogin(event) {
    event.preventDefault();
    var name = byId('login-name').value;
    var password = byId('login-password').value;
    var message = byId('login-error');
    var button = byId('login-submit');
    if (!name || !password) { message.textContent = 'Enter your name and password.'; return; }
    var header;
    try { header = basic(name, password); } catch (e) { message.textContent = 'This name or password cannot be sent.'; return; }
    button.disabled = true;
    message.textContent = 'Signing in…';
    request('/console/api/me', header).then(function (res) {
      button.disabled = false;
      if (res.status === 200 && res.body && res.body.operator !== false) {
        auth = header;
        byId('login-password').value = '';
        message.textContent = '';
        showApp(str(res.body.account) || name);
        if (!parseRoute(location.hash).name || location.hash.length <= 2) {
          history.replaceState(null, '', '#/accounts');
        }
        route();
      } else if (res.status === 401) {
        message.textContent = 'Wrong name or password.';
      } else if (res.status === 403 || res.status === 200) {
        message.textContent = 'This account is not an operator.';
      } else if (res.status === 429) {
        message.textContent = messageOf(res, 'Too many failed sign-ins. Try again later.');
      } else {
        message.textContent = messageOf(res, 'Signing in failed: the server answered with HTTP ' + res.status + '.');
      }
    }, function () {
      button.disabled = false;
      message.textContent = NETWORK_MESSAGE;
    });
  }

  function setCrumbs(items) {
    var nav = byId('crumbs');
    clear(nav);
    items.forEach(function (item, i) {
      if (i > 0) nav.appendChild(el('span', { class: 'sep', 'aria-hidden': 'true' }, '›'));
      if (item.href && i < items.length - 1) nav.appendChild(link(item.href, item.text));
      else nav.appendChild(el('span', { 'aria-current': 'page' }, item.text));
    });
  }

  function setNav(current) {
    byId('nav-accounts').classList.toggle('current', current === 'accounts');
    byId('nav-load').classList.toggle('current', current === 'load');
  }

  // Empties the view and shows its heading and loading line; returns the view element.
  function startView(title, heading) {
    var view = byId('view');
    clear(view);
    document.title = title + ' · Anchorage console';
    if (heading) view.appendChild(heading);
    view.appendChild(el('p', { id: 'loading', class: 'loading', role: 'status' }, 'Loading'));
    view.setAttribute('aria-busy', 'true');
    return view;
  }

  function doneLoading() {
    var loading = byId('loading');
    if (loading) loading.remove();
    byId('view').removeAttribute('aria-busy');
  }

  // ---------------------------------------------------------------- routes

  function hrefAccount(a) { return '#/accounts/' + enc(a); }
  function hrefCollection(a, c) { return hrefAccount(a) + '/collections/' + enc(c); }
  function hrefRecord(a, c, id) { return hrefCollection(a, c) + '/records/' + enc(id); }

  function parseRoute(hash) {
    var raw = hash.replace(/^#\/?/, '');
    var parts;
    try {
      parts = raw === '' ? [] : raw.split('/').map(decodeURIComponent);
    } catch (e) {
      return { name: null };
    }
    var n = parts.length;
    if (n === 0 || (n === 1 && parts[0] === 'accounts')) return { name: 'accounts' };
    if (n === 1 && parts[0] === 'load') return { name: 'load' };
    if (parts[0] !== 'accounts') return { name: null };
    if (n === 2) return { name: 'account', account: parts[1] };
    if (n === 4 && parts[2] === 'collections') return { name: 'collection', account: parts[1], collection: parts[3] };
    if (n === 6 && parts[2] === 'collections' && parts[4] === 'records') {
      return { name: 'record', account: parts[1], collection: parts[3], id: parts[5] };
    }
    return { name: null };
  }

  function route() {
    if (stopView) { stopView(); stopView = null; }
    var gen = ++generation;
    hideError();
    if (!auth) { showLogin(byId('login-error').textContent); return; }
    var r = parseRoute(location.hash);
    setNav(r.name === 'load' ? 'load' : 'accounts');
    window.scrollTo(0, 0);
    switch (r.name) {
      case 'accounts': return showAccounts(gen);
      case 'account': return showAccount(gen, r.account);
      case 'collection': return showCollection(gen, r.account, r.collection);
      case 'record': return showRecord(gen, r.account, r.collection, r.id);
      case 'load': return showLoad(gen);
      default:
        setCrumbs([{ text: 'Accounts', href: '#/accounts' }, { text: 'Unknown page' }]);
        startView('Unknown page', el('h2', null, 'Unknown page'));
        showError('There is no console page at this address.');
    }
  }

  // ---------------------------------------------------------------- accounts

  function showAccounts(gen) {
    setCrumbs([{ text: 'Accounts' }]);
    var view = startView('Accounts', el('h2', null, 'Accounts'));
    get('/console/api/accounts', gen).then(function (body) {
      if (!body) return;
      doneLoading();
      var accounts = Array.isArray(body.accounts) ? body.accounts : [];
      var rows = accounts.map(function (a) {
        var name = str(a.account);
        return el('tr', null, [
          el('td', null, link(hrefAccount(name), name, { class: 'account-link', 'data-account': name })),
          td(number(a.lastPosition), 'num'),
          td(number(a.devices), 'num')
        ]);
      });
      view.appendChild(el('div', { class: 'table-wrap' }, table('accounts', [
        { title: 'Account' }, { title: 'Last position', num: true }, { title: 'Devices', num: true }
      ], rows, 'No accounts yet.')));
    });
  }

  // ---------------------------------------------------------------- one account

  function pushText(push) {
    if (!push) return '—';
    var parts = [push.connected ? 'connected' : 'not connected'];
    parts.push(push.registered ? 'registered' : 'not registered');
    if (typeof push.queued === 'number') parts.push(push.queued.toLocaleString('en-US') + ' queued');
    return parts.join(' · ');
  }

  function statusCell(status) {
    var cls = typeof status === 'number' ? (status < 400 ? 'num status-ok' : 'num status-bad') : 'num';
    return td(dash(status), cls);
  }

  function showAccount(gen, account) {
    setCrumbs([{ text: 'Accounts', href: '#/accounts' }, { text: account }]);
    var view = startView(account, el('h2', { id: 'account-name' }, account));
    var base = ['accounts', account];
    Promise.all([
      get(api(base.concat('devices')), gen),
      get(api(base.concat('collections')), gen)
    ]).then(function (bodies) {
      if (!bodies[0] || !bodies[1] || gen !== generation) return;
      doneLoading();
      var devices = Array.isArray(bodies[0].devices) ? bodies[0].devices : [];
      var collections = Array.isArray(bodies[1].collections) ? bodies[1].collections : [];

      view.appendChild(el('h3', null, 'Devices'));
      view.appendChild(el('div', { class: 'table-wrap' }, table('devices', [
        { title: 'Device' }, { title: 'Stack' }, { title: 'Codec' }, { title: 'Last seen' },
        { title: 'Last status', num: true }, { title: 'Requests', num: true },
        { title: 'Bytes in', num: true }, { title: 'Bytes out', num: true }, { title: 'Push' }
      ], devices.map(function (d) {
        return el('tr', null, [
          td(str(d.device), 'device', d.userAgent ? str(d.userAgent) : null),
          td(dash(d.stack)),
          td(dash(d.codec)),
          timeCell(d.lastSeen),
          statusCell(d.lastStatus),
          td(number(d.requests), 'num'),
          td(bytes(d.bytesIn), 'num', number(d.bytesIn) + ' bytes'),
          td(bytes(d.bytesOut), 'num', number(d.bytesOut) + ' bytes'),
          td(pushText(d.push), 'push nowrap')
        ]);
      }), 'No device has synced this account.')));

      view.appendChild(el('h3', null, 'Collections'));
      view.appendChild(el('div', { class: 'table-wrap' }, table('collections', [
        { title: 'Collection' }, { title: 'Live records', num: true }, { title: 'Deleted', num: true },
        { title: 'Latest position', num: true }, { title: 'Latest modified' }
      ], collections.map(function (c) {
        var name = str(c.collection);
        return el('tr', null, [
          el('td', null, link(hrefCollection(account, name), name, { class: 'collection-link', 'data-collection': name })),
          td(number(c.records), 'num'),
          td(number(c.deleted), 'num'),
          td(number(c.latestPosition), 'num'),
          timeCell(c.latestModified)
        ]);
      }), 'No collections.')));
    });
  }

  // ---------------------------------------------------------------- one collection (keyset paging)

  function summary(fields) {
    if (!Array.isArray(fields)) return '';
    return fields.slice(0, SUMMARY_FIELDS).map(function (f) {
      return str(f.name) + ': ' + truncate(f.text, SUMMARY_CHARS);
    }).join('  ·  ');
  }

  function recordRow(account, collection, r) {
    var id = str(r.id);
    var deleted = r.deleted === true;
    return el('tr', { class: deleted ? 'deleted' : null }, [
      el('td', { class: 'id' }, link(hrefRecord(account, collection, id), id, { class: 'record-link', 'data-record': id })),
      el('td', { class: 'marker' }, deleted ? el('span', null, 'deleted') : null),
      td(number(r.position), 'num'),
      timeCell(r.modified),
      td(deleted ? '' : summary(r.fields), 'summary')
    ]);
  }

  function showCollection(gen, account, collection) {
    setCrumbs([
      { text: 'Accounts', href: '#/accounts' },
      { text: account, href: hrefAccount(account) },
      { text: collection }
    ]);
    var key = JSON.stringify([account, collection]);
    if (!paging || paging.key !== key) paging = { key: key, afters: [null] };

    var view = startView(collection, el('h2', { id: 'collection-name' }, collection));
    var prev = el('button', { id: 'prev-page', type: 'button', class: 'secondary', disabled: true }, '← Previous');
    var next = el('button', { id: 'next-page', type: 'button', class: 'secondary', disabled: true }, 'Next →');
    var info = el('span', { id: 'page-info', class: 'page-info', 'aria-live': 'polite' }, '');
    var searchInput = el('input', { id: 'search-id', type: 'search', placeholder: 'Record id', 'aria-label': 'Record id', autocomplete: 'off', spellcheck: 'false' });
    var searchButton = el('button', { id: 'search-submit', type: 'submit' }, 'Open');
    var searchError = el('p', { id: 'search-error', class: 'search-error', role: 'alert' });
    var search = el('form', { id: 'search', class: 'search', role: 'search' }, [searchInput, searchButton]);
    view.insertBefore(el('div', { class: 'tools' }, [el('div', { class: 'pager' }, [prev, info, next]), search]), byId('loading'));
    view.insertBefore(searchError, byId('loading'));
    var box = el('div', { class: 'table-wrap' });
    view.appendChild(box);
    var nextAfter = null;
    var busy = false;

    // Loads the page that starts after the last entry of `afters`; commits the stack only on success.
    function load(afters, clickedAt) {
      busy = true;
      prev.disabled = true;
      next.disabled = true;
      var after = afters[afters.length - 1];
      var infoBefore = info.textContent;
      var path = api(['accounts', account, 'collections', collection, 'records'],
        '?limit=' + PAGE_SIZE + (after === null ? '' : '&after=' + enc(after)));
      if (!byId('loading') && box.firstChild) {
        box.setAttribute('aria-busy', 'true');
        info.textContent = 'loading…';
      }
      return get(path, gen).then(function (body) {
        busy = false;
        box.removeAttribute('aria-busy');
        if (!body) {
          info.textContent = infoBefore;
          prev.disabled = paging.afters.length <= 1;
          next.disabled = nextAfter === null;
          return;
        }
        doneLoading();
        hideError();
        paging.afters = afters;
        var records = Array.isArray(body.records) ? body.records : [];
        nextAfter = body.next === null || body.next === undefined ? null : str(body.next);
        var t = table('records', [
          { title: 'Id' }, { title: '' }, { title: 'Position', num: true }, { title: 'Modified' }, { title: 'Fields' }
        ], records.map(function (r) { return recordRow(account, collection, r); }), 'No records.');
        var page = afters.length - 1;
        t.setAttribute('data-page', String(page));
        if (clickedAt !== undefined) t.setAttribute('data-render-ms', String(Math.round(performance.now() - clickedAt)));
        clear(box);
        box.appendChild(t);
        var first = page * PAGE_SIZE + 1;
        info.textContent = records.length === 0
          ? (page === 0 ? 'no records' : 'no more records')
          : 'records ' + first.toLocaleString('en-US') + '–' + (first + records.length - 1).toLocaleString('en-US');
        prev.disabled = afters.length <= 1;
        next.disabled = nextAfter === null;
      });
    }

    next.addEventListener('click', function () {
      if (busy || nextAfter === null) return;
      load(paging.afters.concat([nextAfter]), performance.now());
    });
    prev.addEventListener('click', function () {
      if (busy || paging.afters.length <= 1) return;
      load(paging.afters.slice(0, -1), performance.now());
    });
    search.addEventListener('submit', function (event) {
      event.preventDefault();
      var id = searchInput.value.trim();
      searchError.textContent = '';
      if (!id) { searchError.textContent = 'Enter a record id.'; return; }
      searchButton.disabled = true;
      var path = api(['accounts', account, 'collections', collection, 'records', id]);
      get(path, gen, { allow: [404], raw: true }).then(function (res) {
        searchButton.disabled = false;
        if (!res) return;
        if (res.status === 404) { searchError.textContent = 'No record with id “' + id + '”.'; return; }
        prefetched = { path: path, body: res.body };
        location.hash = hrefRecord(account, collection, id);
      });
    });

    load(paging.afters);
  }

  // ---------------------------------------------------------------- one record

  function showRecord(gen, account, collection, id) {
    setCrumbs([
      { text: 'Accounts', href: '#/accounts' },
      { text: account, href: hrefAccount(account) },
      { text: collection, href: hrefCollection(account, collection) },
      { text: id }
    ]);
    var heading = el('h2', { id: 'record-id' }, id);
    var titleRow = el('div', { class: 'title-row' }, heading);
    var view = startView(id, titleRow);
    var path = api(['accounts', account, 'collections', collection, 'records', id]);
    var ready;
    if (prefetched && prefetched.path === path) {
      ready = Promise.resolve(prefetched.body);
    } else {
      ready = get(path, gen);
    }
    prefetched = null;
    ready.then(function (body) {
      if (!body || gen !== generation) return;
      var r = body.record;
      if (!r || typeof r !== 'object') { showError('The server sent an answer the console cannot read.'); return; }
      doneLoading();
      if (r.deleted === true) {
        heading.setAttribute('class', 'deleted');
        titleRow.appendChild(el('span', { id: 'record-deleted', class: 'deleted-badge' }, 'deleted'));
      }
      var meta = el('dl', { class: 'meta', id: 'record-meta' });
      [['Position', number(r.position), 'record-position'],
       ['Modified', null, 'record-modified'],
       ['Node', dash(r.node), 'record-node']].forEach(function (row) {
        meta.appendChild(el('dt', null, row[0]));
        var dd = el('dd', { id: row[2] });
        if (row[2] === 'record-modified') {
          var text = str(r.modified);
          var t = Date.parse(text);
          appendAll(dd, text ? el('time', { datetime: text, title: text }, isNaN(t) ? text : new Date(t).toLocaleString() + '  (' + text + ')') : '—');
        } else {
          dd.textContent = row[1];
        }
        meta.appendChild(dd);
      });
      view.appendChild(meta);

      var fields = Array.isArray(r.fields) ? r.fields : [];
      view.appendChild(el('h3', null, 'Fields'));
      view.appendChild(el('div', { class: 'table-wrap' }, table('record-fields', [
        { title: 'Name' }, { title: 'Type' }, { title: 'Value' }
      ], fields.map(function (f) {
        return el('tr', null, [
          td(str(f.name), 'field-name mono'),
          td(str(f.type), 'field-type'),
          el('td', { class: 'field-text' }, el('pre', null, str(f.text)))
        ]);
      }), r.deleted === true ? 'A deleted record keeps no fields.' : 'No fields.')));

      var sizes = Array.isArray(body.sizes) ? body.sizes : [];
      view.appendChild(el('h3', null, 'Encoded sizes'));
      view.appendChild(el('div', { class: 'table-wrap' }, table('record-sizes', [
        { title: 'Codec' }, { title: 'Media type' }, { title: 'Bytes', num: true }
      ], sizes.map(function (s) {
        return el('tr', null, [
          td(str(s.codec)),
          td(str(s.mediaType), 'mono'),
          td(number(s.bytes), 'num', bytes(s.bytes))
        ]);
      }), 'No sizes.')));
    });
  }

  // ---------------------------------------------------------------- live load

  var CHART = { w: 900, h: 290, left: 40, right: 40, top: 28, bottom: 30 };

  function niceMax(value) {
    if (!(value > 0)) return 1;
    var p = Math.pow(10, Math.floor(Math.log10(value)));
    var steps = [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10];
    for (var i = 0; i < steps.length; i++) if (steps[i] * p >= value) return steps[i] * p;
    return 10 * p;
  }

  // The index of the newest sample whose second is over, by the server's clock (its Date header)
  // when it sends one: the newest sample may be the second still in progress.
  function lastComplete(samples, interval, res) {
    var now = Date.parse(res.headers.get('Date') || '');
    if (isNaN(now)) now = Date.now();
    for (var i = samples.length - 1; i >= 0; i--) {
      var t = Date.parse(str(samples[i].time));
      if (!isNaN(t) && t + interval * 1000 <= now) return i;
    }
    return samples.length - 1;
  }

  function span(seconds) {
    return seconds >= 120 ? Math.round(seconds / 60) + ' min' : Math.round(seconds) + ' s';
  }

  function stat(id, label, unit) {
    return el('div', { class: 'stat' }, [
      el('span', { class: 'label' }, label),
      el('span', { id: id, class: 'value' }, '—'),
      unit ? el('span', { class: 'unit' }, unit) : null
    ]);
  }

  function showLoad(gen) {
    setCrumbs([{ text: 'Load' }]);
    var view = startView('Load', el('h2', null, 'Load'));
    var c = CHART;
    var plotW = c.w - c.left - c.right, plotH = c.h - c.top - c.bottom;
    var svg = svgEl('svg', {
      id: 'load-chart', class: 'chart', viewBox: '0 0 ' + c.w + ' ' + c.h,
      role: 'img', 'aria-label': 'Syncs per second and p99 latency over the last five minutes',
      'data-refreshes': '0', preserveAspectRatio: 'xMidYMid meet'
    });
    for (var g = 0; g <= 4; g++) {
      var y = c.top + plotH * g / 4;
      svg.appendChild(svgEl('line', { class: 'grid', x1: c.left, x2: c.w - c.right, y1: y, y2: y }));
    }
    var syncsMax = svgEl('text', { id: 'load-syncs-max', class: 'axis-label syncs-label', x: c.left, y: c.top - 10, 'text-anchor': 'start' });
    var p99Max = svgEl('text', { id: 'load-p99-max', class: 'axis-label p99-label', x: c.w - c.right, y: c.top - 10, 'text-anchor': 'end' });
    var zeroL = svgEl('text', { class: 'axis-label', x: c.left - 6, y: c.top + plotH + 4, 'text-anchor': 'end' });
    var zeroR = svgEl('text', { class: 'axis-label', x: c.w - c.right + 6, y: c.top + plotH + 4, 'text-anchor': 'start' });
    var startLabel = svgEl('text', { id: 'load-time-start', class: 'axis-label', x: c.left, y: c.h - 8, 'text-anchor': 'start' });
    var endLabel = svgEl('text', { class: 'axis-label', x: c.w - c.right, y: c.h - 8, 'text-anchor': 'end' });
    zeroL.textContent = '0';
    zeroR.textContent = '0';
    endLabel.textContent = 'now';
    var syncLine = svgEl('polyline', { id: 'load-syncs-line', class: 'syncs-line', points: '' });
    var p99Line = svgEl('polyline', { id: 'load-p99-line', class: 'p99-line', points: '' });
    [syncsMax, p99Max, zeroL, zeroR, startLabel, endLabel, p99Line, syncLine].forEach(function (n) { svg.appendChild(n); });

    view.insertBefore(el('div', { class: 'stats' }, [
      stat('load-syncs', 'Syncs', '/s'),
      stat('load-p50', 'p50', 'ms'),
      stat('load-p99', 'p99', 'ms'),
      stat('load-errors', 'Errors', '/s'),
      stat('load-push', 'Push connections')
    ]), byId('loading'));
    view.appendChild(svg);
    view.appendChild(el('div', { class: 'legend' }, [
      el('span', null, [el('span', { class: 'swatch' }), 'syncs per second (left scale)']),
      el('span', null, [el('span', { class: 'swatch p99' }), 'p99 latency, ms (right scale)'])
    ]));

    var refreshes = 0, inFlight = false, stopped = false;

    function draw(res) {
      var body = res.body;
      var all = Array.isArray(body.samples) ? body.samples : [];
      var interval = typeof body.interval === 'number' && body.interval > 0 ? body.interval : 1;
      var lastIndex = lastComplete(all, interval, res);
      var samples = all.slice(0, lastIndex + 1);  // the chart, like the figures, leaves out a second in progress
      var n = samples.length;
      var maxSyncs = 0, maxP99 = 0;
      samples.forEach(function (s) {
        if (typeof s.syncs === 'number' && s.syncs / interval > maxSyncs) maxSyncs = s.syncs / interval;
        if (typeof s.p99 === 'number' && s.p99 > maxP99) maxP99 = s.p99;
      });
      var topSyncs = niceMax(maxSyncs), topP99 = niceMax(maxP99);
      function x(i) { return (c.left + (n <= 1 ? plotW : plotW * i / (n - 1))).toFixed(1); }
      function y(v, top) { return (c.top + plotH - plotH * Math.min(v, top) / top).toFixed(1); }
      var syncPoints = [], p99Points = [];
      samples.forEach(function (s, i) {
        var v = typeof s.syncs === 'number' ? s.syncs / interval : 0;
        syncPoints.push(x(i) + ',' + y(v, topSyncs));
        if (typeof s.p99 === 'number') p99Points.push(x(i) + ',' + y(s.p99, topP99));
      });
      syncLine.setAttribute('points', syncPoints.join(' '));
      p99Line.setAttribute('points', p99Points.join(' '));
      syncsMax.textContent = 'max ' + number(topSyncs) + ' syncs/s';
      p99Max.textContent = 'p99 max ' + ms(topP99) + ' ms';
      startLabel.textContent = n > 1 ? '−' + span((n - 1) * interval) : '';

      var last = n ? samples[n - 1] : null;
      byId('load-syncs').textContent = last && typeof last.syncs === 'number' ? String(Math.round(last.syncs / interval)) : '0';
      byId('load-p50').textContent = last ? ms(last.p50) : '—';
      byId('load-p99').textContent = last ? ms(last.p99) : '—';
      byId('load-errors').textContent = last && typeof last.errors === 'number' ? String(Math.round(last.errors / interval)) : '0';
      byId('load-push').textContent = number(body.pushConnections);
      refreshes += 1;
      svg.setAttribute('data-refreshes', String(refreshes));
    }

    function refresh() {
      if (inFlight || stopped) return;
      inFlight = true;
      get('/console/api/load', gen, { raw: true }).then(function (res) {
        inFlight = false;
        if (!res || stopped) return;
        doneLoading();
        if (!byId('error').hidden) hideError();
        draw(res);
      });
    }

    var timer = setInterval(refresh, 1000);
    stopView = function () { stopped = true; clearInterval(timer); };
    refresh();
  }

  // ---------------------------------------------------------------- start

  function start() {
    byId('login').addEventListener('submit', onLogin);
    byId('logout').addEventListener('click', function () { signOut(''); });
    window.addEventListener('hashchange', route);
    showLogin('');
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
