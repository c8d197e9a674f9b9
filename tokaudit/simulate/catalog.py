"""MCP servers and the tasks agents use them for, shared by benign and attacking sessions.

Attack sessions pick their malicious server from the same catalogue that benign
sessions use (``weatherly``, ``skyfare``, ``github``, …), so a detector cannot
learn "server X is bad": only what a server does in a session tells.

Payload text uses a small controlled vocabulary with no directive or
continuation words (``templates.DIRECTIVE_LEXICON``), so a stealth-4 attack's
results are lexicon-free from the first notice to the final payload.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec

from tokaudit.simulate.text import pick, ri

_encode = msgspec.json.encode

CITIES = ("Paris", "Lisbon", "Osaka", "Denver", "Nairobi", "Oslo", "Austin", "Seoul", "Lima", "Dublin", "Perth", "Porto")
AIRPORTS = ("CDG", "LIS", "KIX", "DEN", "NBO", "OSL", "AUS", "ICN", "LIM", "DUB", "PER", "OPO", "JFK", "SFO", "AMS")
CONDITIONS = ("clear", "cloudy", "light rain", "showers", "fog", "windy", "snow", "sunny intervals", "overcast")
CARRIERS = ("Aerolux", "Bluewing", "Nordair", "Pacifica", "Skylane", "Tasman", "Vela")
LIBRARIES = ("polars", "duckdb", "fastapi", "pydantic", "sqlalchemy", "httpx", "pytest", "react", "vite", "prisma")
TOPICS = ("lazy frames", "window functions", "dependency injection", "validators", "async sessions", "retries",
          "fixtures", "hooks", "build config", "migrations")  # fmt: skip
CURRENCIES = ("USD", "EUR", "JPY", "GBP", "CHF", "AUD", "CAD", "SEK", "NOK", "BRL")
SYMBOLS = ("ACME", "GLOBX", "INITK", "UMBR", "WAYNE", "STARK", "TYRL", "CYBD", "HOOLI", "VANDL")
LANGS = ("fr", "de", "es", "ja", "pt", "it", "ko", "nl")
REPOS = (("acme", "webapp"), ("acme", "billing"), ("initech", "tps-reports"), ("umbrella", "lab-api"), ("hooli", "nucleus"))
SAFE_WORDS = ("alpha", "amber", "basin", "cedar", "delta", "ember", "fjord", "granite", "harbor", "indigo", "juniper",
              "kestrel", "lagoon", "meadow", "nimbus", "onyx", "prairie", "quartz", "ridge", "sierra", "tundra", "umber",
              "valley", "willow", "xenon", "yarrow", "zephyr")  # fmt: skip
MODULES = ("auth", "billing", "api", "storage", "search", "reports", "cli", "jobs", "notifications", "payments", "sync", "ui")


@dataclass
class Task:
    """One concrete task against a scenario's tool: the call, its honest result, and the agent's answer."""

    args: dict[str, Any]
    prompt: str
    payload: str  # what an honest server returns (and a malicious one returns at the end)
    items: list[str]  # the payload split into small records (drip-fed one at a time by a cursor attack)
    answer: str


@dataclass(frozen=True)
class Scenario:
    server: str
    tool: str
    noun: str  # what the result is called in notices ("the forecast is released …")
    description: str
    properties: dict[str, Any]
    required: tuple[str, ...]
    make: Callable[[random.Random], Task]
    siblings: tuple[tuple[str, str], ...] = ()  # other tools the server lists: (name, description)

    def tool_def(self, extra_props: dict[str, Any] | None = None, extra_required: tuple[str, ...] = (), description: str | None = None) -> dict[str, Any]:
        props = {**self.properties, **(extra_props or {})}
        return {
            "name": self.tool,
            "description": description if description is not None else self.description,
            "inputSchema": {"type": "object", "properties": props, "required": [*self.required, *extra_required]},
            "annotations": {"readOnlyHint": True},
        }

    def tools(self, main: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """The server's ``tools/list``: the scenario's tool (or ``main``) and its siblings."""
        out = [main or self.tool_def()]
        for name, desc in self.siblings:
            out.append({"name": name, "description": desc, "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}}})
        return out


def _json(obj: Any, rng: random.Random) -> str:
    # Servers differ: some return compact JSON, some pretty-printed.
    if rng.random() < 0.5:
        return _encode(obj).decode()
    import json

    return json.dumps(obj, indent=2)


def _weather(rng: random.Random) -> Task:
    city, days = pick(rng, CITIES), ri(rng, 3, 7)
    records = [{"day": i + 1, "high_c": ri(rng, 8, 31), "low_c": ri(rng, -2, 18), "conditions": pick(rng, CONDITIONS),
                "rain_mm": round(rng.random() * 12, 1)} for i in range(days)]  # fmt: skip
    items = [_encode(r).decode() for r in records]
    payload = _json({"city": city, "units": "metric", "days": records}, rng)
    answer = f"Here is the {days}-day forecast for {city}: " + "; ".join(f"day {r['day']}: {r['conditions']}, {r['low_c']}–{r['high_c']} °C" for r in records) + "."
    return Task({"city": city, "days": days}, f"What's the weather going to be like in {city} over the {days} days? I'm packing for a trip.", payload, items, answer)


def _flights(rng: random.Random) -> Task:
    a, b = rng.sample(AIRPORTS, 2)
    date = f"2026-04-{ri(rng, 1, 28):02d}"
    n = ri(rng, 4, 10)
    flights = [{"carrier": pick(rng, CARRIERS), "flight": f"{pick(rng, 'ABCDEFGHJK')}{pick(rng, 'XYZ')}{ri(rng, 100, 999)}",
                "depart": f"{ri(rng, 5, 22):02d}:{pick(rng, ('00', '15', '30', '45'))}", "stops": ri(rng, 0, 2),
                "fare_usd": ri(rng, 90, 1400)} for _ in range(n)]  # fmt: skip
    cheapest = min(flights, key=lambda f: f["fare_usd"])
    return Task(
        {"origin": a, "destination": b, "date": date},
        f"Find me flights from {a} to {b} on {date} and tell me the cheapest one.",
        _json({"origin": a, "destination": b, "date": date, "flights": flights}, rng),
        [_encode(f).decode() for f in flights],
        f"The cheapest option is {cheapest['carrier']} {cheapest['flight']} at {cheapest['depart']} for ${cheapest['fare_usd']} "
        f"({cheapest['stops']} stops). I found {n} flights in total.",
    )


def _docs(rng: random.Random) -> Task:
    lib, topic = pick(rng, LIBRARIES), pick(rng, TOPICS)
    sections = [f"## {topic.title()} ({i + 1})\n" + " ".join(pick(rng, SAFE_WORDS) for _ in range(ri(rng, 40, 120))) +
                f"\n\n```python\nimport {lib}\nresult = {lib}.{pick(rng, SAFE_WORDS)}({ri(rng, 1, 99)})\n```"
                for i in range(ri(rng, 3, 8))]  # fmt: skip
    return Task(
        {"library": lib, "topic": topic},
        f"How do I use {topic} in {lib}? Look up the current docs and give me a short example.",
        "\n\n".join(sections),
        sections,
        f"In {lib}, {topic} work like this: " + " ".join(pick(rng, SAFE_WORDS) for _ in range(60)) + ".",
    )


def _account(rng: random.Random) -> Task:
    acct = f"ACC-{ri(rng, 10000, 99999)}"
    record = {"account_id": acct, "name": f"{pick(rng, SAFE_WORDS).title()} {pick(rng, SAFE_WORDS).title()} Ltd",
              "tier": pick(rng, ("gold", "silver", "bronze")), "open_tickets": ri(rng, 0, 9),
              "arr_usd": ri(rng, 5_000, 900_000), "owner": pick(rng, SAFE_WORDS).title(),
              "contacts": [{"name": pick(rng, SAFE_WORDS).title(), "role": pick(rng, ("admin", "billing", "tech"))} for _ in range(ri(rng, 1, 4))]}  # fmt: skip
    return Task({"account_id": acct}, f"Pull up account {acct} and summarise where it stands.", _json(record, rng),
                [_encode({k: v}).decode() for k, v in record.items()],
                f"{record['name']} ({acct}) is a {record['tier']} account with ARR ${record['arr_usd']:,} and {record['open_tickets']} open tickets.")


def _fx(rng: random.Random) -> Task:
    a, b = rng.sample(CURRENCIES, 2)
    amount = pick(rng, (100, 250, 1000, 5000, 12500))
    rate = round(rng.uniform(0.005, 160), 4)
    quote = {"from": a, "to": b, "amount": amount, "rate": rate, "converted": round(amount * rate, 2), "as_of": "2026-03-02T12:00:00Z"}
    return Task({"amount": amount, "from_currency": a, "to_currency": b}, f"How much is {amount} {a} in {b} right now?", _json(quote, rng),
                [_encode({k: v}).decode() for k, v in quote.items()], f"{amount} {a} is about {quote['converted']:,} {b} (rate {rate}).")


def _geo(rng: random.Random) -> Task:
    street = f"{ri(rng, 1, 250)} {pick(rng, SAFE_WORDS).title()} Street, {pick(rng, CITIES)}"
    hits = [{"lat": round(rng.uniform(-60, 60), 5), "lon": round(rng.uniform(-170, 170), 5), "confidence": round(rng.uniform(0.5, 1), 2)}
            for _ in range(ri(rng, 1, 4))]  # fmt: skip
    return Task({"address": street}, f"Get me the coordinates of {street}.", _json({"query": street, "results": hits}, rng),
                [_encode(h).decode() for h in hits], f"{street} is at {hits[0]['lat']}, {hits[0]['lon']}.")


def _query(rng: random.Random) -> Task:
    table = pick(rng, ("orders", "invoices", "signups", "sessions", "refunds"))
    sql = f"SELECT region, count(*) AS n, sum(amount) AS total FROM {table} WHERE created_at >= DATE '2026-02-01' GROUP BY region ORDER BY total DESC"
    rows = [{"region": r, "n": ri(rng, 10, 9000), "total": round(rng.uniform(1e3, 9e5), 2)} for r in rng.sample(("emea", "amer", "apac", "latam", "anz", "nordics"), 4)]
    return Task({"sql": sql}, f"How did {table} break down by region since February 1st?", _json({"columns": ["region", "n", "total"], "rows": rows}, rng),
                [_encode(r).decode() for r in rows], f"Since Feb 1, {rows[0]['region']} leads {table} with {rows[0]['n']} rows totalling {rows[0]['total']:,}.")


def _quote(rng: random.Random) -> Task:
    sym = pick(rng, SYMBOLS)
    q = {"symbol": sym, "price": round(rng.uniform(5, 900), 2), "change_pct": round(rng.uniform(-6, 6), 2), "volume": ri(rng, 10_000, 9_000_000)}
    return Task({"symbol": sym}, f"What's {sym} trading at?", _json(q, rng), [_encode({k: v}).decode() for k, v in q.items()],
                f"{sym} is at ${q['price']} ({q['change_pct']:+}%) on volume {q['volume']:,}.")


def _issue(rng: random.Random) -> Task:
    owner, repo = pick(rng, REPOS)
    number = ri(rng, 10, 4000)
    body = " ".join(pick(rng, SAFE_WORDS) for _ in range(ri(rng, 60, 200)))
    issue = {"number": number, "title": f"{pick(rng, MODULES)}: {pick(rng, SAFE_WORDS)} {pick(rng, SAFE_WORDS)} fails on empty input",
             "state": "open", "labels": rng.sample(("bug", "p1", "p2", "regression", "help wanted"), 2), "body": body,
             "comments": ri(rng, 0, 14)}  # fmt: skip
    return Task({"owner": owner, "repo": repo, "issue_number": number}, f"Summarise issue #{number} in {owner}/{repo} for me.", _json(issue, rng),
                [_encode({k: v}).decode() for k, v in issue.items()], f"#{number} ({issue['title']}) is open with {issue['comments']} comments; " + body[:200] + ".")


def _translate(rng: random.Random) -> Task:
    lang = pick(rng, LANGS)
    text = " ".join(pick(rng, SAFE_WORDS) for _ in range(ri(rng, 20, 80)))
    out = " ".join(w[::-1] for w in text.split())
    return Task({"text": text, "target_lang": lang}, f"Translate this into {lang}: {text}", _json({"target_lang": lang, "translation": out}, rng),
                [_encode({"piece": s}).decode() for s in out.split(" ")[:12]], f"Translation ({lang}): {out}")


def _scan(rng: random.Random) -> Task:
    owner, repo = pick(rng, REPOS)
    findings = [{"rule": f"{pick(rng, ('SEC', 'DEP', 'LIC', 'CFG'))}{ri(rng, 100, 999)}", "file": f"{pick(rng, MODULES)}/{pick(rng, SAFE_WORDS)}.py",
                 "line": ri(rng, 1, 600), "severity": pick(rng, ("low", "medium", "high"))} for _ in range(ri(rng, 2, 9))]  # fmt: skip
    high = sum(f["severity"] == "high" for f in findings)
    return Task({"repository": f"{owner}/{repo}", "scope": "."}, f"Run a security scan on {owner}/{repo} and tell me what needs fixing.",
                _json({"repository": f"{owner}/{repo}", "coverage_pct": 100, "findings": findings}, rng),
                [_encode(f).decode() for f in findings], f"The scan found {len(findings)} findings, {high} of them high severity.")


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("weatherly", "get_forecast", "forecast", "Daily weather forecast for a city.",
             {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1, "maximum": 14}}, ("city",), _weather,
             (("get_alerts", "Active weather alerts for a region."),)),
    Scenario("skyfare", "search_flights", "fare list", "Search one-way flights between two airports on a date.",
             {"origin": {"type": "string"}, "destination": {"type": "string"}, "date": {"type": "string", "format": "date"}},
             ("origin", "destination", "date"), _flights, (("get_booking", "Look up a booking by reference."),)),
    Scenario("docs-search", "get_library_docs", "documentation", "Up-to-date documentation for a library and topic.",
             {"library": {"type": "string"}, "topic": {"type": "string"}}, ("library",), _docs,
             (("resolve_library_id", "Resolve a package name to a library id."),)),
    Scenario("crm-hub", "lookup_account", "account record", "Look up a customer account by id.",
             {"account_id": {"type": "string"}}, ("account_id",), _account, (("list_contacts", "Contacts of an account."),)),
    Scenario("fx-rates", "convert_currency", "quote", "Convert an amount between currencies at the current rate.",
             {"amount": {"type": "number"}, "from_currency": {"type": "string"}, "to_currency": {"type": "string"}},
             ("amount", "from_currency", "to_currency"), _fx),
    Scenario("geo-tools", "geocode", "coordinates", "Geocode a street address.", {"address": {"type": "string"}}, ("address",), _geo,
             (("reverse_geocode", "Address nearest to a point."),)),
    Scenario("warehouse", "run_query", "query result", "Run a read-only SQL query on the analytics warehouse.",
             {"sql": {"type": "string"}}, ("sql",), _query, (("list_tables", "Tables in the warehouse."), ("list_rows", "Rows of a table."))),
    Scenario("marketdata", "get_quote", "quote", "Latest quote for a ticker symbol.", {"symbol": {"type": "string"}}, ("symbol",), _quote),
    Scenario("github", "get_issue", "issue", "Get an issue of a repository.",
             {"owner": {"type": "string"}, "repo": {"type": "string"}, "issue_number": {"type": "integer"}}, ("owner", "repo", "issue_number"),
             _issue, (("search_issues", "Search issues and pull requests."), ("list_commits", "Commits of a branch."),
                      ("create_pull_request", "Open a pull request."))),
    Scenario("lingua", "translate_text", "translation", "Translate text into a target language.",
             {"text": {"type": "string"}, "target_lang": {"type": "string"}}, ("text", "target_lang"), _translate),
    Scenario("repo-scan", "scan_repository", "scan report", "Static security and dependency scan of a repository.",
             {"repository": {"type": "string"}, "scope": {"type": "string"}}, ("repository",), _scan,
             (("get_rule", "Explain a scan rule."),)),
)
BY_SERVER = {s.server: s for s in SCENARIOS}

# Servers used by benign hard negatives (pagination, polling, batch work). Attack cycles borrow
# "quality-gate" and "style-kit", which benign sessions also call once in a while.
LIST_TOOLS = {
    "github": ("search_issues", {"query": {"type": "string"}, "page": {"type": "integer"}, "per_page": {"type": "integer"}}),
    "linear": ("list_issues", {"team": {"type": "string"}, "after": {"type": "string"}, "first": {"type": "integer"}}),
    "sentry": ("search_events", {"query": {"type": "string"}, "cursor": {"type": "string"}}),
    "warehouse": ("list_rows", {"table": {"type": "string"}, "cursor": {"type": "string"}, "limit": {"type": "integer"}}),
}
POLL_TOOLS = {
    "ci-runner": (("trigger_build", {"pipeline": {"type": "string"}, "ref": {"type": "string"}}), ("get_job_status", {"job_id": {"type": "string"}})),
    "deployer": (("start_deployment", {"service": {"type": "string"}, "version": {"type": "string"}}), ("get_deployment", {"deployment_id": {"type": "string"}})),
    "warehouse": (("submit_query", {"sql": {"type": "string"}}), ("get_query_status", {"query_id": {"type": "string"}})),
}
REVIEW_TOOLS = {
    "docs-search": ("analyze_section", {"draft_id": {"type": "string"}, "text": {"type": "string"}}),
    "quality-gate": ("validate_answer", {"draft_id": {"type": "string"}, "criteria": {"type": "string"}}),
    "style-kit": ("refine_answer", {"draft_id": {"type": "string"}, "notes": {"type": "string"}}),
}


def simple_tool_def(name: str, description: str, properties: dict[str, Any], read_only: bool = True) -> dict[str, Any]:
    return {"name": name, "description": description, "inputSchema": {"type": "object", "properties": properties},
            "annotations": {"readOnlyHint": read_only}}  # fmt: skip


def scope_names(rng: random.Random, n: int) -> list[str]:
    """Distinct repository scopes (``src/billing``, ``services/auth/api``…), lexicon-free."""
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < n:
        name = f"{pick(rng, ('src', 'lib', 'services', 'packages', 'apps'))}/{pick(rng, MODULES)}"
        if rng.random() < 0.5:
            name += f"/{pick(rng, SAFE_WORDS)}"
        if name not in seen:
            seen.add(name)
            out.append(name)
    return out


def server_tools(server: str, replace: dict[str, Any] | None = None, extra: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """A server's honest ``tools/list`` (the same in every session), with one definition replaced or tools added.

    Examples:
        >>> [t["name"] for t in server_tools("warehouse")]
        ['run_query', 'list_tables', 'list_rows', 'submit_query', 'get_query_status']
    """
    tools: dict[str, dict[str, Any]] = {}
    scenario = BY_SERVER.get(server)
    if scenario is not None:
        for tool in scenario.tools():
            tools[tool["name"]] = tool
    if server in LIST_TOOLS:
        name, props = LIST_TOOLS[server]
        tools[name] = simple_tool_def(name, f"List {name.split('_', 1)[1]} matching a filter, a page at a time.", props)
    for name, props in POLL_TOOLS.get(server, ()):
        tools[name] = simple_tool_def(name, name.replace("_", " ").capitalize() + ".", props, read_only=name.startswith("get_"))
    if server in REVIEW_TOOLS:
        name, props = REVIEW_TOOLS[server]
        tools[name] = simple_tool_def(name, name.replace("_", " ").capitalize() + " of a draft answer.", props)
    if server == "linear":
        tools["get_issue"] = simple_tool_def("get_issue", "Get a Linear issue.", {"issue_id": {"type": "string"}})
        tools["update_issue"] = simple_tool_def("update_issue", "Update fields of a Linear issue.",
                                                {"issue_id": {"type": "string"}, "state": {"type": "string"}, "labels": {"type": "array"}}, read_only=False)  # fmt: skip
    if replace is not None:
        tools[replace["name"]] = replace
    for tool in extra or ():
        tools[tool["name"]] = tool
    return list(tools.values())
