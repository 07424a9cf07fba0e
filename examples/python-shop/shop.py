#!/usr/bin/env python3
"""A shop in Python beside the standalone obv-link proxy (`npx obv-link-proxy`), standard library only.

It creates a link session server to server, renders <obv-link-account link-token="…">, learns each
outcome from the proxy's signed merchant events (never from the browser) and pays with POST
/transactions. Orders live in memory: this is an example, not a store.
"""
import html
import json
import os
import secrets
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from webhooks import InvalidSignature, verify

PROXY_URL = os.environ.get("OBV_PROXY_URL", "http://127.0.0.1:3000/obv")  # the proxy, mount path included
PAGE_PROXY_URL = os.environ.get("OBV_PAGE_PROXY_URL", PROXY_URL)  # as the browser reaches it (/obv behind your reverse proxy)
API_KEY = os.environ["OBV_MERCHANT_API_KEY"]
# The proxy's own list (comma-separated, whsec_…): one variable for both processes, and a rotation that
# adds a secret on the proxy is verified here as soon as this list holds it too.
EVENTS_SECRETS = [secret.strip() for secret in os.environ["OBV_EVENTS_SECRETS"].split(",") if secret.strip()]
ELEMENT_FILE = os.environ.get("OBV_ELEMENT_FILE", "node_modules/obv-link/dist/obv-link-account.js")
HOST, PORT = os.environ.get("HOST", "127.0.0.1"), int(os.environ.get("PORT", "8000"))

orders: dict[str, dict] = {}  # by merchantTransactionId
seen_events: set[str] = set()  # delivery is at least once: each event id has one effect
lock = threading.Lock()


def proxy(method: str, path: str, body: dict) -> tuple[int, dict]:
    """Calls the proxy with the merchant API key: server to server, never from the page."""
    request = urllib.request.Request(f"{PROXY_URL}{path}", method=method, data=json.dumps(body).encode(),
                                     headers={"authorization": f"Bearer {API_KEY}", "content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=15) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def new_order() -> dict:
    order = {"merchantUserId": "user-8231", "merchantTransactionId": f"order-{secrets.token_hex(8)}",
             "amount": "49.99", "currency": "USD", "status": "linking"}
    status, session = proxy("POST", "/link-sessions", {
        **{key: order[key] for key in ("merchantUserId", "merchantTransactionId", "amount", "currency")},
        "consumer": {"firstName": "Ana", "lastName": "López", "email": "ana@example.com"}, "language": "en"})
    if status != 201:
        raise RuntimeError(f"POST /link-sessions answered {status}: {session}")
    with lock:
        orders[order["merchantTransactionId"]] = order | {"linkToken": session["linkToken"]}
    return orders[order["merchantTransactionId"]]


def handle_event(event: dict) -> None:
    """Applies one verified merchant event to its order; unknown types and orders are acknowledged and ignored."""
    data = event.get("data", {})
    with lock:
        if event["id"] in seen_events or (order := orders.get(data.get("merchantTransactionId"))) is None:
            return
        seen_events.add(event["id"])
        kind = event["type"]
        if kind == "link.succeeded":
            order.update(status="linked", linkRef=data["linkRef"], account=f"{data['fiName']} {data['accountLabel']}")
        elif kind in ("link.failed", "link.cancelled", "link.expired"):
            order["status"] = kind.removeprefix("link.")
        elif kind in ("payment.succeeded", "payment.failed"):
            order["payment"] = data.get("transactionStatus") or data.get("code")
        order.setdefault("events", []).append(f"{event['id']} {kind}")


def pay(order: dict) -> tuple[int, dict]:
    with lock:
        if order["status"] != "linked":
            return 409, {"detail": "No linked account yet: wait for the bank's confirmation."}
        order["status"] = "paying"
    status, result = proxy("POST", "/transactions", {
        key: order[key] for key in ("linkRef", "merchantUserId", "merchantTransactionId", "amount", "currency")})
    with lock:
        order.update(status="paid" if status < 300 else "linked", result=result)
    return status, result


PAGE = """<!doctype html>
<html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title><link rel="icon" href="data:,">
<style>body{{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem}}
button{{font:inherit;padding:.6rem 1.2rem}}</style>
<h1>{title}</h1>
{body}
</html>"""

CHECKOUT = """<script type="module" src="/assets/obv-link-account.js"></script>
<p>Order {order_id}: ${amount}</p>
<obv-link-account proxy-url="{proxy_url}" link-token="{link_token}"></obv-link-account>
<p id="status" role="status">Link your bank account to pay.</p>
<form method="post" action="/orders/{order_id}/pay"><button id="pay" disabled>Pay ${amount}</button></form>
<script>
  // The page only shows what the shop's server learned from the signed event; it reports nothing itself.
  // A failed check (the network, a restart of the shop) is tried again, so the page never stops listening.
  const poll = async () => {{
    let order;
    try {{
      const answer = await fetch('/orders/{order_id}/status');
      if (!answer.ok) throw new Error(`status ${{answer.status}}`);
      order = await answer.json();
    }} catch {{
      return setTimeout(poll, 2000);
    }}
    const words = {{linked: `Bank confirmed: ${{order.account}}`, failed: 'The bank could not verify the account.',
                   cancelled: 'Linking was cancelled.', expired: 'The link session expired.'}};
    if (words[order.status]) document.getElementById('status').textContent = words[order.status];
    document.getElementById('pay').disabled = order.status !== 'linked';
    if (order.status === 'linking') setTimeout(poll, 500);
  }};
  poll();
</script>"""


class Shop(BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/":
            return self.redirect(f"/orders/{new_order()['merchantTransactionId']}")
        if self.path == "/assets/obv-link-account.js":
            with open(ELEMENT_FILE, "rb") as element:
                return self.send(200, element.read(), "text/javascript")
        parts = self.path.strip("/").split("/")
        order = orders.get(parts[1]) if len(parts) >= 2 and parts[0] == "orders" else None
        if order and len(parts) == 2:
            body = CHECKOUT.format(order_id=order["merchantTransactionId"], amount=order["amount"],
                                   proxy_url=html.escape(PAGE_PROXY_URL), link_token=html.escape(order["linkToken"]))
            return self.page(200, "Checkout", body)
        if order and parts[2:] == ["status"]:
            return self.send(200, json.dumps({key: order.get(key) for key in ("status", "account", "events")}).encode(), "application/json")
        self.page(404, "Not found", "<p>No such page.</p>")

    def do_POST(self):
        body = self.rfile.read(min(int(self.headers.get("content-length") or 0), 65536))
        if self.path == "/obv-events":
            try:
                verify(EVENTS_SECRETS, self.headers, body)
            except InvalidSignature as error:
                self.log_message("refused an event: %s", error)
                return self.send(401, b"", "text/plain")
            handle_event(json.loads(body))
            return self.send(204, b"", "text/plain")
        parts = self.path.strip("/").split("/")
        order = orders.get(parts[1]) if len(parts) == 3 and parts[0] == "orders" and parts[2] == "pay" else None
        if order is None:
            return self.page(404, "Not found", "<p>No such order.</p>")
        if self.headers.get("sec-fetch-site", "same-origin") != "same-origin":  # no cross-site posts
            return self.page(403, "Forbidden", "<p>Cross-site request refused.</p>")
        status, result = pay(order)
        words = html.escape(str(result.get("transactionStatus") or result.get("detail") or result))
        paid = f'<p>Order {order["merchantTransactionId"]}, ${order["amount"]}, transaction {html.escape(str(result.get("transactionId")))}</p>'
        self.page(status if status >= 400 else 200, "Payment", f'<p id="result">Payment {words}</p>' + (paid if status < 300 else ""))

    def page(self, status: int, title: str, body: str):
        self.send(status, PAGE.format(title=title, body=body).encode(), "text/html; charset=utf-8")

    def redirect(self, location: str):
        self.send_response(303)
        self.send_header("location", location)
        self.send_header("content-length", "0")
        self.end_headers()

    def send(self, status: int, body: bytes, content_type: str):
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.send_header("cache-control", "no-store")
        self.end_headers()
        self.wfile.write(body)


if __name__ == "__main__":
    server = ThreadingHTTPServer((HOST, PORT), Shop)
    print(f"python shop listening on http://{HOST}:{server.server_port}", flush=True)
    server.serve_forever()
