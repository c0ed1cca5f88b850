"""/forksync commands end to end through the local GitHub: a person comments, the fake sends
the signed webhook, the bot stores, processes and answers through the API."""
import aiohttp
import pytest

from bot.github.client import token_client
from bot.sync import store as sync_store
from tests.support.botharness import Bot
from tests.support.github import make_source_repo

CONFIG = """\
areas:
  - name: amd
    paths: ["third_party/amd/**"]
    owners: [carol]
"""


@pytest.fixture
async def world(fake_github, tmp_path):
    fake = fake_github
    make_source_repo(tmp_path / "src", [{"README.md": "fork\n", ".github/forksync.yml": CONFIG}])
    fork = fake.create_repo("meta/triton", source=tmp_path / "src")
    fake.install("meta")
    for login, perm in [("alice", "write"), ("bob", "read"), ("carol", "read")]:
        fake.add_collaborator(fork, login, perm)
        fake.add_token(f"{login}-token", login)
    bot = await Bot(fake, tmp_path).start()
    session = aiohttp.ClientSession()
    people = {login: token_client(session, f"{login}-token", base_url=fake.url) for login in ("alice", "bob", "carol")}
    issue = await people["alice"].post("/repos/meta/triton/issues", data={"title": "tracking", "body": "x"})
    yield fake, bot, people, issue["number"]
    await session.close()
    await bot.stop()


async def comments(gh, number):
    return [c async for c in gh.getiter(f"/repos/meta/triton/issues/{number}/comments")]


async def say(gh, number, body):
    return await gh.post(f"/repos/meta/triton/issues/{number}/comments", data={"body": body})


async def say_as_reader(fake, gh, login, number, body):
    """A read-only collaborator comments. (The local GitHub demands push access to comment, which
    GitHub does not; so the comment is written with write access and the permission is lowered
    before the bot sees it — the bot checks permission when the command runs.)"""
    repo = fake.state.repo("meta", "triton")
    repo.collaborators[login] = "write"
    try:
        return await say(gh, number, body)
    finally:
        repo.collaborators[login] = "read"


async def test_writer_runs_hold_once_with_reaction_and_reply(world):
    fake, bot, people, n = world
    c = await say(people["alice"], n, "/forksync hold")
    await bot.settle()
    replies = [x for x in await comments(people["alice"], n) if x["user"]["login"] == "forksync[bot]"]
    assert len(replies) == 1
    assert "@alice `/forksync hold`: on hold: no sync PRs are opened or merged until `/forksync unhold`." in replies[0]["body"]
    reactions = [r async for r in people["alice"].getiter(f"/repos/meta/triton/issues/comments/{c['id']}/reactions")]
    assert [(r["content"], r["user"]["login"]) for r in reactions] == [("eyes", "forksync[bot]")]
    assert sync_store.load_status(bot.store, "meta/triton").held is True
    # the same delivery again (GitHub redelivery: same GUID, same bytes) → processed once
    d = fake.webhooks.of("issue_comment", "created")[-1]
    await fake.webhooks.redeliver(d.guid)
    await bot.settle()
    assert len([x for x in await comments(people["alice"], n) if x["user"]["login"] == "forksync[bot]"]) == 1
    assert [x.redeliveries for x in bot.deliveries() if x.delivery_id == d.guid] == [1]
    assert bot.deliveries("dead") == []


async def test_reader_is_refused(world):
    fake, bot, people, n = world
    await say_as_reader(fake, people["bob"], "bob", n, "/forksync hold")
    await bot.settle()
    replies = [x["body"] for x in await comments(people["bob"], n) if x["user"]["login"] == "forksync[bot]"]
    assert len(replies) == 1
    assert "@bob `/forksync hold` was refused: @bob has `read` permission; `hold` needs write or admin." in replies[0]
    assert sync_store.load_status(bot.store, "meta/triton") is None


async def test_malformed_command_gets_the_verb_list(world):
    fake, bot, people, n = world
    await say(people["alice"], n, "/forksync frobnicate now")
    await bot.settle()
    [reply] = [x["body"] for x in await comments(people["alice"], n) if x["user"]["login"] == "forksync[bot]"]
    assert "@alice I could not run `/forksync frobnicate now`: unknown verb 'frobnicate'." in reply
    # table cells: a | inside them is written \| (GitHub shows <sha|#PR>)
    for usage in ("`/forksync plan`", "`/forksync pick <sha\\|#PR>`", "`/forksync defer <sha\\|#PR> <reason>`",
                  "`/forksync signoff <area\\|metric>`", "`/forksync retest [suite]`"):
        assert f"| {usage} |" in reply


async def test_edited_comment_runs_only_its_new_command(world):
    fake, bot, people, n = world
    c = await say(people["alice"], n, "/forksync hold")
    await bot.settle()
    await people["alice"].patch(f"/repos/meta/triton/issues/comments/{c['id']}",
                                data={"body": "/forksync hold\n/forksync unhold"})
    await bot.settle()
    await people["alice"].patch(f"/repos/meta/triton/issues/comments/{c['id']}",
                                data={"body": "/forksync hold\n/forksync unhold\n(typo fixed)"})
    await bot.settle()
    replies = [x["body"] for x in await comments(people["alice"], n) if x["user"]["login"] == "forksync[bot]"]
    assert len(replies) == 2
    assert "`/forksync hold`: on hold" in replies[0]
    assert "`/forksync unhold`: hold lifted" in replies[1]
    assert sync_store.load_status(bot.store, "meta/triton").held is False


async def test_a_command_another_writer_edits_into_someones_comment_does_not_run_as_its_author(world):
    """GitHub lets any writer edit anyone's comment; its ``edited`` event names the editor as
    sender while the comment stays its author's. A command alice writes into carol's comment (an
    owner's: a sign-off in carol's name would pass the owners' rule) is refused, naming both, and
    never runs as carol's — nor as alice's, who did not write a comment of her own."""
    fake, bot, people, n = world
    c = await say_as_reader(fake, people["carol"], "carol", n, "Looking at the sync tomorrow.")
    await bot.settle()
    await people["alice"].patch(f"/repos/meta/triton/issues/comments/{c['id']}",
                                data={"body": "Looking at the sync tomorrow.\n/forksync hold"})
    await bot.settle()
    [edit] = fake.webhooks.of("issue_comment", "edited")
    assert (edit.payload["sender"]["login"], edit.payload["comment"]["user"]["login"]) == ("alice", "carol")
    replies = [x["body"] for x in await comments(people["alice"], n) if x["user"]["login"] == "forksync[bot]"]
    assert [r.split("\n", 1)[1] for r in replies] == [
        "@alice `/forksync hold` was refused: @alice edited this comment of @carol's; a command runs as its "
        "comment's author, so one written into another person's comment is not run — @alice, write it in a "
        "comment of your own.\n"]
    assert sync_store.load_status(bot.store, "meta/triton") is None or not sync_store.load_status(bot.store, "meta/triton").held


async def test_help_lists_the_commands_to_anyone(world):
    """Every sync PR body ends "see `/forksync help`": a reader asking gets the table, no refusal."""
    fake, bot, people, n = world
    await say_as_reader(fake, people["bob"], "bob", n, "/forksync help")
    await bot.settle()
    [reply] = [x["body"] for x in await comments(people["alice"], n) if x["user"]["login"] == "forksync[bot]"]
    assert reply.split("\n")[1:5] == ["@bob `/forksync help`:", "", "Commands I understand (one per line, at the start "
                                       "of a line):", ""]
    assert "| `/forksync pick <sha\\|#PR>` | open an urgent isolated pick PR for one upstream commit |" in reply
    assert "| `/forksync help` | list these commands |" in reply


async def test_an_unhold_edited_into_an_older_comment_is_the_latest_word(world):
    """hold/unhold go by when the command was written: an ``unhold`` added by editing a comment
    written before the ``hold`` in force was written after it, and lifts it."""
    fake, bot, people, n = world
    early = await say(people["alice"], n, "Looking into the sync.")
    await bot.settle()
    await say(people["alice"], n, "/forksync hold")
    await bot.settle()
    assert sync_store.load_status(bot.store, "meta/triton").held is True
    await people["alice"].patch(f"/repos/meta/triton/issues/comments/{early['id']}",
                                data={"body": "Looking into the sync.\n\nFixed it:\n/forksync unhold"})
    await bot.settle()
    replies = [x["body"] for x in await comments(people["alice"], n) if x["user"]["login"] == "forksync[bot]"]
    assert "`/forksync unhold`: hold lifted" in replies[-1]
    assert sync_store.load_status(bot.store, "meta/triton").held is False


async def test_merge_on_an_issue_and_signoff_by_non_owner(world):
    fake, bot, people, n = world
    await say(people["alice"], n, "/forksync merge")
    await say_as_reader(fake, people["carol"], "carol", n, "/forksync signoff amd")
    await say_as_reader(fake, people["bob"], "bob", n, "/forksync signoff amd")
    await bot.settle()
    replies = [x["body"] for x in await comments(people["alice"], n) if x["user"]["login"] == "forksync[bot]"]
    assert len(replies) == 3
    assert "@alice `/forksync merge`: `merge` works on a sync PR, not on an issue." in replies[0]
    # carol owns area amd (read permission is enough for a sign-off) but this is an issue, not a PR
    assert "@carol `/forksync signoff amd`: `signoff` works on a sync PR, not on an issue." in replies[1]
    assert "@bob `/forksync signoff amd` was refused: only owners of area `amd` may sign it off." in replies[2]
    assert "@carol" in replies[2]
