#!/usr/bin/env python3
"""Drive the operator console (`anchorage serve --console`) in headless Chromium through Selenium.

Each run performs one scenario against a running console server and reports the outcome:

    python3 Tests/Browser/console_browser.py --url http://127.0.0.1:PORT --scenario NAME
        [--operator NAME:PASSWORD] [--user NAME:PASSWORD] [--account A] [--device D]
        [--collection C] [--record ID] [--expect-field NAME=TEXT ...] [--pages N]
        [--screenshots DIR] [--timeout SECONDS]

Scenarios:
  browse       log in as --operator, click --account, see --device in the devices table, click
               --collection, click --record, check each --expect-field NAME=TEXT in the field table.
               Result: fields shown, loadMs (first page load) and firstDataMs (navigation start until
               the accounts table is rendered).
  xss          log in, open the --record view by hash URL, check each field shows exactly the text the
               JSON API gives (fetched here with urllib), that an `<img src=x onerror=...>` payload shows
               literally, that no alert is open, `window.__xss` is undefined and the fields hold no <img>.
  forbidden    log in with --user (not an operator): the login form says "not an operator" and no data
               view appears.
  live         log in, open #/load, wait until the syncs/s figure is > 0, the chart refreshed at least
               3 times and its syncs polyline changed between refreshes; then leave the view and check
               the page stops polling /console/api/load.
  paging       log in, open the --collection view, click "next" --pages times (100 rows per page, ids
               strictly increasing within and across pages), "previous" once, then search --record.
  screenshots  save login.png, accounts.png, account.png, collection.png, record.png and load.png
               into --screenshots DIR.

Every scenario also fails on a Content-Security-Policy violation or an uncaught JavaScript error
in the page (recorded by a probe injected through the DevTools protocol before the page loads), and
on any `style` or `on…` attribute left in the final DOM.

Output: on success the last line of stdout is one JSON object, `{"ok": true, ...}`, and the exit
status is 0. On failure one line `error: <what went wrong>` goes to stderr and the exit status is 1.

How a Swift test uses it: start the server on a free port, then run
`/usr/bin/env python3 Tests/Browser/console_browser.py --url http://127.0.0.1:<port> --scenario browse ...`
from the package root with `Process`, wait for it, and decode the last stdout line as JSON when the
status is 0 (or fail the test with stderr when it is 1). It needs Debian's chromium, chromium-driver
and python3-selenium (`scripts/install-deps.sh --browser`); when the `python3` on PATH lacks Selenium
(say a pyenv interpreter) the script re-runs itself with /usr/bin/python3. Waits are explicit
WebDriverWait conditions bounded by --timeout (default 20 s); the script never sleeps blindly.
"""

import argparse
import base64
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

try:
    from selenium import webdriver
    from selenium.common.exceptions import (
        JavascriptException,
        NoAlertPresentException,
        NoSuchElementException,
        StaleElementReferenceException,
        TimeoutException,
        WebDriverException,
    )
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:
    # Debian's python3-selenium lives in /usr/lib/python3/dist-packages, which only the system
    # interpreter sees; run again under it once.
    if os.path.exists('/usr/bin/python3') and not os.environ.get('CONSOLE_BROWSER_REEXEC') \
            and os.path.realpath(sys.executable) != os.path.realpath('/usr/bin/python3'):
        os.environ['CONSOLE_BROWSER_REEXEC'] = '1'
        os.execv('/usr/bin/python3', ['/usr/bin/python3'] + sys.argv)
    sys.stderr.write('error: python3-selenium is not installed (scripts/install-deps.sh --browser)\n')
    sys.exit(1)

CHROMIUM = os.environ.get('CONSOLE_BROWSER_CHROMIUM', '/usr/bin/chromium')
CHROMEDRIVER = os.environ.get('CONSOLE_BROWSER_CHROMEDRIVER', '/usr/bin/chromedriver')
PAGE_SIZE = 100
XSS_MARKER = '<img src=x onerror='

# Runs in every document before the page's own scripts: records CSP violations and JS errors.
PROBE = r"""
window.__consoleProbe = {csp: [], errors: []};
document.addEventListener('securitypolicyviolation', function (e) {
  window.__consoleProbe.csp.push(e.violatedDirective + ' blocked ' + (e.blockedURI || 'inline') +
    ' at ' + (e.sourceFile || '?') + ':' + (e.lineNumber || '?'));
});
window.addEventListener('error', function (e) {
  window.__consoleProbe.errors.push(String(e.message) + ' at ' + (e.filename || '?') + ':' + (e.lineno || '?'));
});
window.addEventListener('unhandledrejection', function (e) {
  window.__consoleProbe.errors.push('unhandled rejection: ' + String(e.reason));
});
"""


class Failure(Exception):
    """A scenario check failed; the message becomes the `error:` line."""


class ArgumentParser(argparse.ArgumentParser):
    def error(self, message):
        sys.stderr.write('error: ' + message + '\n')
        sys.exit(1)


def parse_arguments(argv):
    p = ArgumentParser(description='Drive the Anchorage operator console in headless Chromium.')
    p.add_argument('--url', required=True, help='server root, e.g. http://127.0.0.1:8080')
    p.add_argument('--scenario', required=True, choices=sorted(SCENARIOS))
    p.add_argument('--operator', help='NAME:PASSWORD of an operator account')
    p.add_argument('--user', help='NAME:PASSWORD of an account that is not an operator')
    p.add_argument('--account')
    p.add_argument('--device')
    p.add_argument('--collection')
    p.add_argument('--record')
    p.add_argument('--expect-field', action='append', default=[], metavar='NAME=TEXT')
    p.add_argument('--pages', type=int, default=5)
    p.add_argument('--screenshots', metavar='DIR')
    p.add_argument('--timeout', type=float, default=20.0)
    args = p.parse_args(argv)
    args.url = args.url.rstrip('/')
    for cred in ('operator', 'user'):
        value = getattr(args, cred)
        if value is not None and ':' not in value:
            p.error('--%s must be NAME:PASSWORD' % cred)
    for item in args.expect_field:
        if '=' not in item:
            p.error('--expect-field must be NAME=TEXT, got %r' % item)
    if args.pages < 1:
        p.error('--pages must be at least 1')
    return args


def require(args, *names):
    missing = ['--' + n.replace('_', '-') for n in names if not getattr(args, n)]
    if missing:
        raise Failure('scenario %s needs %s' % (args.scenario, ', '.join(missing)))


def q(part):
    """Percent-encode one path part the way the page's encodeURIComponent does (decodes the same)."""
    return urllib.parse.quote(part, safe='')


class Console:
    """The browser session plus the helpers every scenario uses."""

    def __init__(self, args):
        self.args = args
        self.timeout = args.timeout
        if not os.path.exists(CHROMIUM) or not os.path.exists(CHROMEDRIVER):
            raise Failure('%s or %s is missing (scripts/install-deps.sh --browser)' % (CHROMIUM, CHROMEDRIVER))
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in ('--headless=new', '--no-sandbox', '--disable-dev-shm-usage', '--window-size=1280,900',
                     '--no-first-run', '--disable-extensions', '--password-store=basic', '--lang=en-US'):
            options.add_argument(flag)
        # Leave an unexpected alert open so the xss check can see it instead of Selenium dismissing it.
        options.set_capability('unhandledPromptBehavior', 'ignore')
        self.driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        self.driver.set_page_load_timeout(self.timeout)
        self.driver.execute_cdp_cmd('Page.addScriptToEvaluateOnNewDocument', {'source': PROBE})

    def close(self):
        try:
            self.driver.quit()
        except WebDriverException:
            pass

    # -- waiting

    def wait(self, what, condition, timeout=None):
        """Waits until condition(driver) is truthy and returns its value; fails naming `what`."""
        try:
            return WebDriverWait(self.driver, timeout or self.timeout, poll_frequency=0.05,
                                 ignored_exceptions=(NoSuchElementException, StaleElementReferenceException)
                                 ).until(condition)
        except TimeoutException:
            raise Failure('timed out after %gs waiting for %s%s' % (timeout or self.timeout, what, self.page_messages()))

    def page_messages(self):
        """The page's visible error messages, to make a timeout understandable."""
        try:
            texts = self.js("""
                var out = [];
                ['error', 'login-error', 'search-error'].forEach(function (id) {
                  var e = document.getElementById(id);
                  if (e && e.textContent && !e.hidden) out.push('#' + id + ': ' + e.textContent);
                });
                out.push('hash ' + location.hash);
                return out;""")
            return ' (' + '; '.join(texts) + ')'
        except WebDriverException:
            return ''

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def by_id(self, element_id):
        return self.driver.find_element(By.ID, element_id)

    def displayed(self, element_id):
        found = self.driver.find_elements(By.ID, element_id)
        return bool(found) and found[0].is_displayed()

    def text_of(self, element):
        return element.get_attribute('textContent')

    def click(self, element):
        self.js("arguments[0].scrollIntoView({block: 'center'});", element)
        element.click()

    # -- pages

    def open(self, route=''):
        self.driver.get(self.args.url + '/console' + (('#' + route) if route else ''))
        self.wait('the login form', lambda d: self.displayed('login-name'))

    def load_ms(self):
        return self.wait('the load event of the first page', lambda d: d.execute_script("""
            var n = performance.getEntriesByType('navigation')[0];
            return n && n.loadEventEnd > 0 ? n.loadEventEnd - n.startTime : null;"""))

    def login(self, credentials, expect_operator=True):
        name, _, password = credentials.partition(':')
        field = self.by_id('login-name')
        field.clear()
        field.send_keys(name)
        field = self.by_id('login-password')
        field.clear()
        field.send_keys(password)
        self.click(self.by_id('login-submit'))
        if not expect_operator:
            return

        def signed_in(d):
            if not self.displayed('login-view') and self.displayed('view'):
                return True
            message = self.text_of(self.by_id('login-error'))
            if message and message != 'Signing in…':
                raise Failure('login as %s failed: %s' % (name, message))
            return False
        self.wait('the login of %s' % name, signed_in)

    def set_route(self, route):
        self.js('location.hash = arguments[0];', route)

    def link(self, container, css, attribute, value):
        """The link in `container` whose `attribute` equals value (compared exactly, not via CSS)."""
        for a in self.driver.find_elements(By.CSS_SELECTOR, '#%s %s' % (container, css)):
            if a.get_attribute(attribute) == value:
                return a
        return None

    def wait_link(self, container, css, attribute, value):
        self.wait('table #%s' % container, lambda d: d.find_element(By.ID, container))
        a = self.link(container, css, attribute, value)
        if a is None:
            shown = [x.get_attribute(attribute) for x in self.driver.find_elements(By.CSS_SELECTOR, '#%s %s' % (container, css))]
            raise Failure('no %s link %r in #%s; shown: %s' % (attribute, value, container, json.dumps(shown[:20])))
        return a

    def record_fields(self):
        """[(name, type, text)] of #record-fields, text exactly as in the DOM (textContent)."""
        return [tuple(row) for row in self.js("""
            return Array.from(document.querySelectorAll('#record-fields tbody tr:not(.empty-row)')).map(function (tr) {
              return [tr.cells[0].textContent, tr.cells[1].textContent, tr.cells[2].textContent];
            });""")]

    def wait_record(self, record):
        self.wait('the record view of %r' % record, lambda d: d.find_element(By.ID, 'record-fields')
                  and self.text_of(d.find_element(By.ID, 'record-id')) == record)

    def page_ids(self):
        return self.js("""
            return Array.from(document.querySelectorAll('#records a.record-link'))
              .map(function (a) { return a.getAttribute('data-record'); });""")

    def wait_page(self, page):
        def rendered(d):
            t = d.find_element(By.ID, 'records')
            return t if t.get_attribute('data-page') == str(page) else False
        return self.wait('records page %d' % (page + 1), rendered)

    def check_health(self):
        probe = self.js('return window.__consoleProbe || null;')
        if probe is None:
            raise Failure('the page probe is missing (the DevTools script did not run)')
        if probe['csp']:
            raise Failure('Content-Security-Policy violation: ' + '; '.join(probe['csp'][:3]))
        if probe['errors']:
            raise Failure('JavaScript error in the page: ' + '; '.join(probe['errors'][:3]))
        # CSP does not stop element.style (CSSOM), but the console promises never to use it, nor
        # inline event attributes: both show up as attributes in the DOM.
        inline = self.js("""
            var found = [];
            document.querySelectorAll('*').forEach(function (e) {
              for (var i = 0; i < e.attributes.length; i++) {
                var name = e.attributes[i].name;
                if (name === 'style' || name.indexOf('on') === 0) found.push(e.tagName.toLowerCase() + '[' + name + ']');
              }
            });
            return found;""")
        if inline:
            raise Failure('inline style or event attributes in the page: ' + ', '.join(inline[:5]))

    # -- the API, straight from Python

    def api(self, path):
        name, _, password = self.args.operator.partition(':')
        token = base64.b64encode((name + ':' + password).encode('utf-8')).decode('ascii')
        request = urllib.request.Request(self.args.url + '/console/api/' + path,
                                         headers={'Authorization': 'Basic ' + token, 'Accept': 'application/json'})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read().decode('utf-8'))
        except urllib.error.HTTPError as e:
            raise Failure('GET /console/api/%s answered %d: %s' % (path, e.code, e.read()[:200].decode('utf-8', 'replace')))
        except (urllib.error.URLError, OSError) as e:
            raise Failure('GET /console/api/%s failed: %s' % (path, e))


def record_route(account, collection, record=None):
    route = '/accounts/%s/collections/%s' % (q(account), q(collection))
    return route + ('/records/' + q(record) if record is not None else '')


# ------------------------------------------------------------------------------------------ scenarios

def scenario_browse(c, args):
    require(args, 'operator', 'account', 'device', 'collection', 'record')
    c.open()
    load_ms = c.load_ms()
    c.login(args.operator)
    table = c.wait('the accounts table', lambda d: d.find_element(By.ID, 'accounts'))
    first_data_ms = float(table.get_attribute('data-rendered-at'))

    c.click(c.wait_link('accounts', 'a.account-link', 'data-account', args.account))
    c.wait('the devices and collections of %r' % args.account,
           lambda d: d.find_element(By.ID, 'devices') and d.find_element(By.ID, 'collections'))
    devices = c.js("""return Array.from(document.querySelectorAll('#devices tbody tr:not(.empty-row)'))
                      .map(function (tr) { return tr.cells[0].textContent; });""")
    if args.device not in devices:
        raise Failure('device %r is not in #devices; shown: %s' % (args.device, json.dumps(devices)))

    c.click(c.wait_link('collections', 'a.collection-link', 'data-collection', args.collection))
    c.wait_page(0)
    link = c.link('records', 'a.record-link', 'data-record', args.record)
    if link is None:
        raise Failure('record %r is not on the first page of %r' % (args.record, args.collection))
    c.click(link)
    c.wait_record(args.record)

    fields = {}
    for name, _, text in c.record_fields():
        fields.setdefault(name, text)
    for item in args.expect_field:
        name, _, text = item.partition('=')
        if name not in fields:
            raise Failure('field %r is not shown; fields: %s' % (name, json.dumps(sorted(fields))))
        if fields[name] != text:
            raise Failure('field %r shows %r, expected %r' % (name, fields[name], text))
    return {'fields': fields, 'loadMs': round(load_ms, 1), 'firstDataMs': round(first_data_ms, 1)}


def scenario_xss(c, args):
    require(args, 'operator', 'account', 'collection', 'record')
    c.open(record_route(args.account, args.collection, args.record))
    c.login(args.operator)
    c.wait_record(args.record)

    expected = c.api(record_route(args.account, args.collection, args.record)[1:])['record']['fields']
    shown = c.record_fields()
    want = [(f['name'], f['type'], f['text']) for f in expected]
    if shown != want:
        raise Failure('fields shown differ from the API: shown %s, API %s' % (json.dumps(shown)[:400], json.dumps(want)[:400]))
    visible = c.js("""return Array.from(document.querySelectorAll('#record-fields tbody td'))
                      .map(function (td) { return td.innerText; }).join('\\n');""")
    if not any(XSS_MARKER in f['text'] or XSS_MARKER in f['name'] for f in expected):
        raise Failure('record %r holds no %s... payload to check' % (args.record, XSS_MARKER))
    if XSS_MARKER not in visible:
        raise Failure('the %s... payload is not shown literally' % XSS_MARKER)

    try:
        alert = c.driver.switch_to.alert
        text = alert.text
        raise Failure('a JavaScript alert is open: %r' % text)
    except NoAlertPresentException:
        pass
    if c.js('return typeof window.__xss;') != 'undefined':
        raise Failure('window.__xss is set: the payload ran')
    images = c.js("return document.querySelectorAll('#record-fields img').length + ':' + document.querySelectorAll('img').length;")
    if images != '0:0':
        raise Failure('img elements in the page (record-fields:document) = %s' % images)
    return {'shown': {name: text for name, _, text in shown}}


def scenario_forbidden(c, args):
    require(args, 'user')
    c.open()
    c.login(args.user, expect_operator=False)

    def answered(d):
        if c.displayed('view'):
            raise Failure('%s was let in: the data view is shown' % args.user.partition(':')[0])
        message = c.text_of(d.find_element(By.ID, 'login-error'))
        return message if message and message != 'Signing in…' else False
    message = c.wait('the login answer', answered)
    if 'not an operator' not in message:
        raise Failure('#login-error says %r, expected "not an operator"' % message)
    if not c.displayed('login-view') or c.displayed('view'):
        raise Failure('a data view is shown after a refused login')
    leaked = c.js("""return ['accounts', 'devices', 'collections', 'records', 'record-fields', 'load-chart']
                      .filter(function (id) { return document.getElementById(id); });""")
    if leaked:
        raise Failure('data elements present after a refused login: %s' % ', '.join(leaked))
    return {}


def scenario_live(c, args):
    require(args, 'operator')
    c.open()
    c.login(args.operator)
    c.wait('the accounts table', lambda d: d.find_element(By.ID, 'accounts'))
    c.click(c.by_id('nav-load'))
    c.wait('the load chart', lambda d: d.find_element(By.ID, 'load-chart').get_attribute('data-refreshes') not in (None, '0'))
    start = int(c.by_id('load-chart').get_attribute('data-refreshes'))
    seen = {}  # refresh number -> points of the syncs line
    state = {'max': 0, 'changed': False}

    def progressed(d):
        snap = d.execute_script("""
            var svg = document.getElementById('load-chart');
            return [svg.getAttribute('data-refreshes'),
                    document.getElementById('load-syncs-line').getAttribute('points'),
                    document.getElementById('load-syncs').textContent];""")
        refreshes = int(snap[0])
        seen.setdefault(refreshes, snap[1])
        try:
            syncs = int(snap[2])
        except ValueError:
            raise Failure('#load-syncs is not an integer: %r' % snap[2])
        state['max'] = max(state['max'], syncs)
        if refreshes - 1 in seen and seen[refreshes - 1] != seen[refreshes]:
            state['changed'] = True
        return syncs > 0 and refreshes >= start + 3 and state['changed'] and refreshes
    refreshes = c.wait('3 refreshes with syncs > 0 and a moving syncs line', progressed)
    for element_id in ('load-p50', 'load-p99', 'load-errors', 'load-push'):
        if not c.text_of(c.by_id(element_id)).strip():
            raise Failure('#%s is empty' % element_id)

    # Leaving the view stops the refresh timer: no /console/api/load request for 2.5 s afterwards.
    c.click(c.by_id('nav-accounts'))
    c.wait('the accounts table', lambda d: d.find_element(By.ID, 'accounts'))
    count = "return performance.getEntriesByType('resource').filter(function (e) { return e.name.indexOf('/console/api/load') >= 0; }).length;"
    before = c.js(count)
    left_at = time.monotonic()

    def quiet(d):
        if d.execute_script(count) != before:
            raise Failure('the load view kept polling /console/api/load after it was left')
        return time.monotonic() - left_at >= 2.5
    c.wait('2.5 s without load requests', quiet, timeout=max(c.timeout, 5))
    return {'maxSyncs': state['max'], 'refreshes': refreshes}


def check_ids(ids, page, previous_last):
    for a, b in zip(ids, ids[1:]):
        if not a < b:
            raise Failure('page %d: ids not strictly increasing: %r then %r' % (page + 1, a, b))
    if ids and previous_last is not None and not previous_last < ids[0]:
        raise Failure('page %d starts with %r, not after %r of the page before' % (page + 1, ids[0], previous_last))


def scenario_paging(c, args):
    require(args, 'operator', 'account', 'collection', 'record')
    c.open()
    c.login(args.operator)
    c.set_route(record_route(args.account, args.collection))
    c.wait_page(0)
    pages = [c.page_ids()]
    if len(pages[0]) != PAGE_SIZE:
        raise Failure('the first page shows %d records, expected %d' % (len(pages[0]), PAGE_SIZE))
    check_ids(pages[0], 0, None)
    page_ms, wall_ms = [], []
    for page in range(1, args.pages + 1):
        button = c.wait('#next-page to be enabled', lambda d: d.find_element(By.ID, 'next-page').is_enabled()
                        and d.find_element(By.ID, 'next-page'))
        started = time.monotonic()
        c.click(button)
        table = c.wait_page(page)
        wall_ms.append(round((time.monotonic() - started) * 1000, 1))
        page_ms.append(float(table.get_attribute('data-render-ms')))
        ids = c.page_ids()
        last_page = not c.by_id('next-page').is_enabled()
        if len(ids) != PAGE_SIZE and not (last_page and ids):
            raise Failure('page %d shows %d records, expected %d' % (page + 1, len(ids), PAGE_SIZE))
        check_ids(ids, page, pages[-1][-1])
        info = c.text_of(c.by_id('page-info'))
        first = page * PAGE_SIZE + 1
        if '{:,}'.format(first) not in info:
            raise Failure('#page-info says %r on page %d' % (info, page + 1))
        pages.append(ids)
        if last_page:
            break

    c.click(c.by_id('prev-page'))
    back = len(pages) - 2
    c.wait_page(back)
    if c.page_ids() != pages[back]:
        raise Failure('#prev-page did not show page %d again' % (back + 1))

    missing = args.record + '-no-such-record'
    search = c.by_id('search-id')
    search.clear()
    search.send_keys(missing)
    c.click(c.by_id('search-submit'))
    message = c.wait('the search miss message', lambda d: c.text_of(d.find_element(By.ID, 'search-error')) or False)
    if 'No record with id' not in message:
        raise Failure('#search-error says %r for a missing id' % message)
    search = c.by_id('search-id')
    search.clear()
    search.send_keys(args.record)
    c.click(c.by_id('search-submit'))
    c.wait_record(args.record)
    return {'pageMs': page_ms, 'pageWallMs': wall_ms}


def scenario_screenshots(c, args):
    require(args, 'operator', 'screenshots')
    os.makedirs(args.screenshots, exist_ok=True)
    saved = []

    def shot(name):
        path = os.path.join(args.screenshots, name)
        if not c.driver.save_screenshot(path):
            raise Failure('could not save %s' % path)
        saved.append(path)

    def first_or(container, css, attribute, wanted):
        if wanted:
            return c.wait_link(container, css, attribute, wanted)
        c.wait('table #%s' % container, lambda d: d.find_element(By.ID, container))
        links = c.driver.find_elements(By.CSS_SELECTOR, '#%s %s' % (container, css))
        if not links:
            raise Failure('#%s has no links to follow' % container)
        return links[0]

    c.open()
    shot('login.png')
    c.login(args.operator)
    c.wait('the accounts table', lambda d: d.find_element(By.ID, 'accounts'))
    shot('accounts.png')
    c.click(first_or('accounts', 'a.account-link', 'data-account', args.account))
    c.wait('the account view', lambda d: d.find_element(By.ID, 'devices') and d.find_element(By.ID, 'collections'))
    shot('account.png')
    c.click(first_or('collections', 'a.collection-link', 'data-collection', args.collection))
    c.wait_page(0)
    shot('collection.png')
    record = c.link('records', 'a.record-link', 'data-record', args.record) if args.record else None
    if args.record and record is None:
        # Not on the first page: open it by its address.
        require(args, 'account', 'collection')
        c.set_route(record_route(args.account, args.collection, args.record))
        record_id = args.record
    else:
        record = record or first_or('records', 'a.record-link', 'data-record', None)
        record_id = record.get_attribute('data-record')
        c.click(record)
    c.wait_record(record_id)
    shot('record.png')
    c.click(c.by_id('nav-load'))
    c.wait('3 load refreshes', lambda d: int(d.find_element(By.ID, 'load-chart').get_attribute('data-refreshes') or 0) >= 3)
    shot('load.png')
    return {'screenshots': saved}


SCENARIOS = {
    'browse': scenario_browse,
    'xss': scenario_xss,
    'forbidden': scenario_forbidden,
    'live': scenario_live,
    'paging': scenario_paging,
    'screenshots': scenario_screenshots,
}


def main(argv):
    args = parse_arguments(argv)
    console = None
    try:
        console = Console(args)
        result = SCENARIOS[args.scenario](console, args)
        console.check_health()
    except Failure as e:
        return fail(str(e))
    except JavascriptException as e:
        return fail('script error while checking the page: %s' % (e.msg or e).splitlines()[0])
    except WebDriverException as e:
        return fail('WebDriver: %s' % str(e.msg or e).strip().splitlines()[0])
    finally:
        if console is not None:
            console.close()
    output = {'ok': True}
    output.update(result)
    print(json.dumps(output, ensure_ascii=False))
    return 0


def fail(message):
    sys.stderr.write('error: %s\n' % ' '.join(message.split()))
    return 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
