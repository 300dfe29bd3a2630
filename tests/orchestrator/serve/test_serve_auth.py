"""Every route needs the token (the routes are enumerated from the app, so a new one cannot be forgotten); a foreign
Origin is refused; no CORS headers; the page's files are served from their folder only."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
import trio
from starlette.routing import Route

from orchestrator.serve.app import create_app, serve_app
from orchestrator.serve.errors import UnknownRunError
from orchestrator.serve.manager import open_manager
from orchestrator.serve.routes import static_file

from .support import TOKEN, open_service, simple_script


def _concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "x", path)


async def test_without_the_token_every_route_answers_401_with_a_hint(tmp_path: Path) -> None:
    async with open_service(tmp_path, simple_script()) as svc:
        app = create_app(svc.manager, TOKEN)
        routes = [(m, _concrete(r.path)) for r in app.routes if isinstance(r, Route) for m in sorted(r.methods or ())]
        assert len(routes) >= 11 and ("GET", "/") in routes and ("GET", "/static/x") in routes
        async with httpx.AsyncClient(base_url=svc.url) as bare:
            for method, path in [*routes, ("GET", "/no/such/route"), ("DELETE", "/api/runs")]:
                for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"}):
                    response = await bare.request(method, path, headers=headers)
                    assert response.status_code == 401, (method, path, headers)
                    if method == "HEAD":
                        continue
                    body = response.json()
                    assert body["error"] and "token" in body["hint"]
                    assert not any(h.lower().startswith("access-control-") for h in response.headers)
                wrong = await bare.request(method, path + "?token=wrong")
                assert wrong.status_code == 401
            via_query = await bare.get(f"/api/runs?token={TOKEN}")
            assert via_query.status_code == 200 and via_query.json()["runs"] == []


async def test_a_foreign_origin_is_refused_and_the_own_origin_accepted(tmp_path: Path) -> None:
    async with open_service(tmp_path, simple_script()) as svc:
        for origin in ("http://evil.example", "null", svc.url.replace("127.0.0.1", "localhost")):
            response = await svc.client.get("/api/runs", headers={"Origin": origin})
            assert response.status_code == 403, origin
            assert response.json()["hint"]
        own = await svc.client.get("/api/runs", headers={"Origin": svc.url})
        assert own.status_code == 200
        assert not any(h.lower().startswith("access-control-") for h in own.headers)
        preflight = await svc.client.options("/api/goals", headers={"Origin": "http://evil.example"})
        assert preflight.status_code == 403


async def test_the_page_and_its_files_come_from_the_static_folder_only(tmp_path: Path) -> None:
    static = tmp_path / "static"
    static.mkdir()
    (static / "index.html").write_text("<!doctype html><title>dash</title>")
    (static / "app.css").write_text("body{}")
    (static / "js").mkdir()
    (static / "js" / "app.js").write_text("export const x = 1;")
    (tmp_path / "secret.txt").write_text("TOP-SECRET-CONTENT")
    async with open_manager(state_dir=tmp_path / "s2", env={}) as manager, trio.open_nursery() as nursery:
        stop = trio.Event()
        app = create_app(manager, TOKEN, static_dir=static)
        url = await nursery.start(serve_app, app, "127.0.0.1", 0, stop.wait)
        async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}) as client:
            page = await client.get("/")
            assert page.status_code == 200 and "<title>dash</title>" in page.text
            assert page.headers["content-type"].startswith("text/html")
            css = await client.get("/static/app.css")
            assert css.text == "body{}" and css.headers["content-type"] == "text/css; charset=utf-8"
            # a module's type is the service's, not the system's MIME table's; nothing is cached, nothing sniffed
            module = await client.get("/static/js/app.js")
            assert module.text == "export const x = 1;"
            assert module.headers["content-type"] == "text/javascript; charset=utf-8"
            for response in (page, css, module):
                assert response.headers["cache-control"] == "no-store"
            assert module.headers["x-content-type-options"] == "nosniff"
            for path in ("/static/..%2fsecret.txt", "/static/%2e%2e/secret.txt", "/static/nope.js", "/static/"):
                response = await client.get(path)
                assert response.status_code == 404, path
                assert "TOP-SECRET-CONTENT" not in response.text
        stop.set()


async def test_without_the_page_installed_the_root_is_a_clean_404(tmp_path: Path) -> None:
    async with open_manager(state_dir=tmp_path / "s", env={}) as manager, trio.open_nursery() as nursery:
        stop = trio.Event()
        app = create_app(manager, TOKEN, static_dir=tmp_path / "empty")
        url = await nursery.start(serve_app, app, "127.0.0.1", 0, stop.wait)
        async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}) as client:
            missing = await client.get("/")
            assert missing.status_code == 404 and missing.json()["hint"]
        stop.set()


@pytest.mark.parametrize("relative", ["../secret.txt", "../../etc/passwd", "/etc/passwd", "sub/../../secret.txt"])
def test_static_file_refuses_paths_out_of_its_folder(tmp_path: Path, relative: str) -> None:
    root = tmp_path / "static"
    (root / "sub").mkdir(parents=True)
    (tmp_path / "secret.txt").write_text("secret")
    with pytest.raises(UnknownRunError):
        static_file(root, relative)
