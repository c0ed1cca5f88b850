"""``forksync app setup`` end to end against the local GitHub: the CLI serves its page, a scripted
browser follows it (the form GitHub's page takes, GitHub's redirect back), the code is exchanged,
and the written settings file and key are what ``serve`` needs — with no secret printed."""
from __future__ import annotations

import asyncio
import html
import json
import re
import stat
import threading

import aiohttp
import pytest

from bot.cli import app_setup
from bot.cli.main import main
from bot.github.client import GitHubApp
from tests.support.github import FAST_RETRY
from tests.support.processes import free_port


async def follow_setup_page(page_url: str) -> tuple[str, dict]:
    """What a browser does: load the page, submit its form (the manifest) to GitHub, follow
    GitHub's redirect back to the setup page. Returns (the final page's text, the manifest)."""
    async with aiohttp.ClientSession() as s:
        async with s.get(page_url) as r:
            assert r.status == 200
            page = await r.text()
        action = html.unescape(re.search(r'<form id="manifest-form" action="([^"]+)" method="post">', page)[1])
        manifest = json.loads(html.unescape(re.search(r'name="manifest" value="([^"]+)"', page)[1]))
        async with s.post(action, data={"manifest": json.dumps(manifest)}, allow_redirects=False) as r:
            assert r.status == 302, await r.text()
            back = r.headers["Location"]
        assert back.startswith(page_url + "redirect?code=")
        async with s.get(back) as r:
            assert r.status == 200, await r.text()
            return await r.text(), manifest


async def test_app_setup_through_the_cli(fake_github, tmp_path, capsys):
    fake = fake_github
    settings = tmp_path / "conf" / "forksync.env"
    settings.parent.mkdir()
    settings.write_text("# mine\nFORKSYNC_DB=/var/lib/forksync/forksync.db\nFORKSYNC_APP_ID=1\n")
    port = free_port()
    argv = ["app", "setup", "--url", "https://fs.example.org", "--name", "forksync-meta", "--org", "meta",
            "--github-url", fake.url, "--port", str(port), "--settings", str(settings), "--no-browser", "--timeout", "60"]
    rc: list[int] = []
    thread = threading.Thread(target=lambda: rc.append(main(argv)))
    thread.start()
    page_url = f"http://127.0.0.1:{port}/"
    for _ in range(200):                    # the CLI's page starts listening in its own thread
        try:
            done_page, manifest = await follow_setup_page(page_url)
            break
        except aiohttp.ClientConnectorError:
            await asyncio.sleep(0.05)
    else:
        pytest.fail("the setup page never listened")
    await asyncio.to_thread(thread.join, 30)
    assert rc == [0]

    app = next(a for a in fake.state.apps.values() if a.slug == "forksync-meta")
    assert app.owner.login == "meta" and app.owner.type == "Organization"
    assert manifest["hook_attributes"] == {"url": "https://fs.example.org/webhook", "active": True}
    assert manifest["redirect_url"] == f"{page_url}redirect"
    assert f"The GitHub App forksync-meta (id {app.id}) is created" in done_page
    # the settings file: dotenv, 0600, the old lines kept, the App id replaced in place
    assert stat.S_IMODE(settings.stat().st_mode) == 0o600
    key_file = settings.parent / "forksync-meta.private-key.pem"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert key_file.read_text() == app.private_key_pem
    from dotenv import dotenv_values

    values = dotenv_values(settings)
    assert list(values)[:3] == ["FORKSYNC_DB", "FORKSYNC_APP_ID", "FORKSYNC_APP_SLUG"]
    session_secret = values.pop("FORKSYNC_SESSION_SECRET")
    assert len(session_secret) >= 40
    assert values == {
        "FORKSYNC_DB": "/var/lib/forksync/forksync.db", "FORKSYNC_APP_ID": str(app.id), "FORKSYNC_APP_SLUG": "forksync-meta",
        "FORKSYNC_PRIVATE_KEY_FILE": str(key_file), "FORKSYNC_WEBHOOK_SECRET": app.webhook_secret,
        "FORKSYNC_OAUTH_CLIENT_ID": app.client_id, "FORKSYNC_OAUTH_CLIENT_SECRET": app.client_secret,
        "FORKSYNC_GITHUB_URL": fake.url, "FORKSYNC_GIT_URL": fake.url + "/{owner}/{repo}.git"}
    assert settings.read_text().startswith("# mine\n")
    # no secret reaches the terminal
    out = capsys.readouterr()
    for secret in (app.webhook_secret, app.client_secret, session_secret, "PRIVATE KEY"):
        assert secret not in out.out + out.err
    assert f"created the GitHub App forksync-meta (id {app.id})" in out.out
    # the key and id written are the App's: they authenticate as it, with the manifest's permissions
    async with aiohttp.ClientSession() as session:
        gh = GitHubApp(session, app_id=values["FORKSYNC_APP_ID"], private_key=key_file.read_text(),
                       base_url=values["FORKSYNC_GITHUB_URL"], retry=FAST_RETRY)
        me = await gh.app_client.getitem("/app")
    assert me["slug"] == "forksync-meta"
    assert me["permissions"] == {"metadata": "read", **manifest["default_permissions"]}
    assert me["events"] == manifest["default_events"]
    # GitHub's webhooks are now signed with the App's secret (the public hook URL is not reached from here)
    assert fake.webhooks.secret == app.webhook_secret and fake.webhooks.url != "https://fs.example.org/webhook"


async def test_a_code_is_good_once(fake_github, tmp_path):
    fake = fake_github
    answers: list = []

    async def browser(page_url: str) -> None:
        answers.append(await follow_setup_page(page_url))

    opts = app_setup.SetupOptions(url="https://fs.example.org", name="forksync-test", api_url=fake.url, port=0,
                                  settings=tmp_path / "f.env", timeout_s=60)
    tasks: list = []
    result = await app_setup.run_setup(opts, lambda line: None, lambda url: tasks.append(asyncio.ensure_future(browser(url))))
    await asyncio.gather(*tasks)
    assert result.slug == "forksync-test" and result.settings == (tmp_path / "f.env").resolve()
    code = next(iter(fake.state.manifest_codes))
    async with aiohttp.ClientSession() as s:
        async with s.post(f"{fake.url}/app-manifests/{code}/conversions",
                          headers={"User-Agent": "t", "X-GitHub-Api-Version": "2022-11-28"}) as r:
            assert r.status == 404


async def test_a_redirect_without_the_pages_state_is_refused(fake_github, tmp_path):
    opts = app_setup.SetupOptions(url="https://fs.example.org", api_url=fake_github.url, port=0,
                                  settings=tmp_path / "f.env", timeout_s=2)
    seen: list = []

    async def forged(page_url: str) -> None:
        async with aiohttp.ClientSession() as s:
            async with s.get(page_url + "redirect?code=abc&state=forged") as r:
                seen.append((r.status, await r.text()))

    tasks: list = []
    with pytest.raises(app_setup.UserError, match="did not send the browser back within 2 s"):
        await app_setup.run_setup(opts, lambda line: None, lambda url: tasks.append(asyncio.ensure_future(forged(url))))
    await asyncio.gather(*tasks)
    assert seen[0][0] == 400 and "does not carry the state this page sent" in seen[0][1]
    assert not (tmp_path / "f.env").exists()


async def test_a_taken_name_is_named(fake_github, tmp_path):
    """The local GitHub's own App is called forksync: GitHub refuses a second one of that name."""
    opts = app_setup.SetupOptions(url="https://fs.example.org", api_url=fake_github.url, port=0,
                                  settings=tmp_path / "f.env", timeout_s=60)
    pages: list = []

    async def browser(page_url: str) -> None:
        try:
            await follow_setup_page(page_url)
        except AssertionError as e:
            pages.append(str(e))

    tasks: list = []
    with pytest.raises(app_setup.UserError, match=r"GitHub refused to create the App: 422 Validation Failed "
                                                  r"\(name already_exists\); e.g. pick another --name"):
        await app_setup.run_setup(opts, lambda line: None, lambda url: tasks.append(asyncio.ensure_future(browser(url))))
    await asyncio.gather(*tasks)
    assert "GitHub refused to create the App" in pages[0]
    assert not (tmp_path / "f.env").exists()


@pytest.mark.parametrize("existing, updates, expected", [
    ("", {"A": "1"}, "# written by forksync app setup\nA=1\n"),
    ("A=old\n# keep\nexport B=2\n", {"A": "new", "B": "x y"}, 'A=new\n# keep\nB="x y"\n'),
    ("C=3", {"A": 'q"\\'}, 'C=3\n\n# written by forksync app setup\nA="q\\"\\\\"\n'),
])
def test_merge_dotenv(existing, updates, expected, tmp_path):
    from dotenv import dotenv_values

    text = app_setup.merge_dotenv(existing, updates)
    assert text == expected
    (tmp_path / "e").write_text(text)
    assert {k: dotenv_values(tmp_path / "e")[k] for k in updates} == updates


def test_web_url_for():
    assert app_setup.web_url_for("https://api.github.com") == "https://github.com"
    assert app_setup.web_url_for("https://ghe.example.org/api/v3/") == "https://ghe.example.org"
    assert app_setup.web_url_for("http://127.0.0.1:5000") == "http://127.0.0.1:5000"


def test_a_github_other_than_github_com_gets_its_own_clone_urls(tmp_path):
    # serve clones from FORKSYNC_GIT_URL, whose default is github.com's: an App made on GitHub
    # Enterprise (or the local GitHub) fetched every fork from github.com ("Could not resolve host")
    app = {"id": 7, "slug": "fs", "pem": "k", "webhook_secret": "w", "client_id": "c", "client_secret": "s"}
    key = tmp_path / "fs.pem"
    ghe = app_setup.settings_updates(app, key, "https://ghe.example.org/api/v3/")
    assert ghe["FORKSYNC_GITHUB_URL"] == "https://ghe.example.org/api/v3"
    assert ghe["FORKSYNC_GIT_URL"] == "https://ghe.example.org/{owner}/{repo}.git"
    # a web host given with --web-url is the clone host too
    other = app_setup.settings_updates(app, key, "https://api.corp.example", web_url="https://git.corp.example/")
    assert other["FORKSYNC_GIT_URL"] == "https://git.corp.example/{owner}/{repo}.git"
    # github.com's default needs no line; a clone URL already in the file is the operator's and stays
    assert not {"FORKSYNC_GITHUB_URL", "FORKSYNC_GIT_URL"} & set(app_setup.settings_updates(app, key, "https://api.github.com"))
    kept = app_setup.settings_updates(app, key, "https://ghe.example.org/api/v3",
                                      existing="FORKSYNC_GIT_URL=ssh://git@ghe.example.org/{owner}/{repo}.git\n")
    assert "FORKSYNC_GIT_URL" not in kept


def test_manifest_by_hand_names_the_public_url_never_the_setup_page(capsys):
    import json

    # nothing says where the deployment is: the command says what to fill in
    assert main(["app", "manifest"]) == 2
    err = capsys.readouterr().err
    assert "names the deployment's public URL" in err and "pass --url https://<public host>" in err
    # every URL of the manifest is the public one, GitHub's redirect after confirming included
    assert main(["app", "manifest", "--url", "https://fs.example.org/", "--name", "forksync-meta"]) == 0
    out = capsys.readouterr()
    m = json.loads(out.out)
    assert (m["url"], m["hook_attributes"]["url"], m["redirect_url"], m["callback_urls"]) == (
        "https://fs.example.org", "https://fs.example.org/webhook", "https://fs.example.org/", ["https://fs.example.org/auth/callback"])
    assert "127.0.0.1" not in out.out + out.err and "https://fs.example.org/?code=" in out.err
    # a redirect of one's own stays possible
    assert main(["app", "manifest", "--url", "https://fs.example.org", "--redirect-url", "https://fs.example.org/done"]) == 0
    assert json.loads(capsys.readouterr().out)["redirect_url"] == "https://fs.example.org/done"


async def test_the_browser_gets_a_page_saying_why_github_refused_the_app(fake_github, tmp_path):
    """The person who just clicked "Create GitHub App" is looking at the browser, not the terminal:
    when GitHub refuses the App (here its name is taken) the redirect answers with an HTML page —
    still an error status — that says what happened and what to do in the CLI's own words, and
    that the setup stopped, so they know to start it again."""
    opts = app_setup.SetupOptions(url="https://fs.example.org", api_url=fake_github.url, port=0,
                                  settings=tmp_path / "f.env", timeout_s=60)
    answers: list = []

    async def browser(page_url: str) -> None:
        async with aiohttp.ClientSession() as s:
            async with s.get(page_url) as r:
                page = await r.text()
            action = html.unescape(re.search(r'<form id="manifest-form" action="([^"]+)" method="post">', page)[1])
            manifest = re.search(r'name="manifest" value="([^"]+)"', page)[1]
            async with s.post(action, data={"manifest": html.unescape(manifest)}, allow_redirects=False) as r:
                back = r.headers["Location"]
            async with s.get(back) as r:
                answers.append((r.status, r.content_type, await r.text()))

    tasks: list = []
    with pytest.raises(app_setup.UserError) as refused:
        await app_setup.run_setup(opts, lambda line: None, lambda url: tasks.append(asyncio.ensure_future(browser(url))))
    await asyncio.gather(*tasks)
    [(status, content_type, body)] = answers
    assert (status, content_type) == (502, "text/html")
    assert body.lstrip().lower().startswith("<!doctype html>")
    said = str(refused.value)
    assert said.startswith("app setup: GitHub refused to create the App: 422 Validation Failed (name already_exists)")
    assert html.escape(said, quote=False) in body, body
    assert "<h1>The GitHub App was not created</h1>" in body
    assert "forksync app setup</code> has stopped" in body and "--name" in body
    assert not (tmp_path / "f.env").exists()
