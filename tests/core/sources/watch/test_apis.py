"""Which API a path speaks, and where it goes without ``--upstream``."""

from __future__ import annotations

import json

import pytest

from core.sources.watch.apis import Upstreams, api_of, error_body


@pytest.mark.parametrize(("path", "api"), [
    ("/v1/messages", "messages"), ("/v1/messages/count_tokens", None),
    ("/v1/responses", "responses"), ("/responses", "responses"),
    ("/v1/responses/compact", "responses.compact"), ("/responses/compact/", "responses.compact"),
    ("/v1/chat/completions", "chat.completions"), ("/chat/completions", "chat.completions"),
    ("/openai/deployments/d/chat/completions", "chat.completions"),
    ("/v1/responses/resp_1", None), ("/v1/models", None), ("/", None),
])
def test_the_api_is_told_by_the_path(path, api):
    assert api_of(path) == api


def test_without_upstream_each_api_goes_to_its_own_host():
    routes = Upstreams.of(None)
    assert str(routes.target("/v1/messages?beta=true")) == \
        "https://api.anthropic.com/v1/messages?beta=true"
    assert str(routes.target("/v1/responses")) == "https://api.openai.com/v1/responses"
    assert str(routes.target("/responses/compact")) == \
        "https://api.openai.com/v1/responses/compact"
    assert str(routes.target("/chat/completions")) == \
        "https://api.openai.com/v1/chat/completions"
    assert str(routes.target("/v1/models")) == "https://api.anthropic.com/v1/models"
    mine = Upstreams.of(None, "http://127.0.0.1:9000/anthropic/")
    assert str(mine.target("/v1/messages")) == "http://127.0.0.1:9000/anthropic/v1/messages"
    assert "api.openai.com" in mine.describe() and "127.0.0.1:9000" in mine.describe()


OPENAI_KEY = {"Authorization": "Bearer sk-openai"}
ANTHROPIC_KEY = {"x-api-key": "sk-ant", "anthropic-version": "2023-06-01"}


@pytest.mark.parametrize(("path", "headers", "host"), [
    ("/v1/responses/resp_1", {}, "api.openai.com"),
    ("/v1/responses/resp_1/cancel", ANTHROPIC_KEY, "api.openai.com"),  # only OpenAI has it
    ("/responses/resp_1/input_items?limit=5", {}, "api.openai.com"),
    ("/v1/chat/completions/chatcmpl-1/messages", {}, "api.openai.com"),
    ("/v1/models", OPENAI_KEY, "api.openai.com"),
    ("/v1/embeddings", {"api-key": "azure"}, "api.openai.com"),
    ("/v1/files", {"authorization": "bearer sk-openai"}, "api.openai.com"),
    ("/v1/models", ANTHROPIC_KEY, "api.anthropic.com"),
    ("/v1/models", {"x-api-key": "sk-ant"}, "api.anthropic.com"),
    # Claude Code signed in: a bearer token, but the Anthropic version header says whose
    ("/v1/messages/count_tokens", {**OPENAI_KEY, "anthropic-version": "2023-06-01"},
     "api.anthropic.com"),
    ("/v1/models", {}, "api.anthropic.com"),
    ("/v1/responsesx", OPENAI_KEY, "api.openai.com"),  # not OpenAI's path: by the key
    ("/v1/responsesx", {}, "api.anthropic.com"),
    # only Anthropic has these, whatever the credentials say
    ("/v1/messages/batches", {"authorization": "Bearer x"}, "api.anthropic.com"),
    ("/api/oauth/usage", {"Authorization": "Bearer x"}, "api.anthropic.com"),
])
def test_a_path_beside_the_model_endpoints_goes_where_its_request_says(path, headers, host):
    """Before, every path but the three model endpoints went to Anthropic: a Codex or SDK
    call for a stored response or the model list took the client's OpenAI key there."""
    target = Upstreams.of(None).target(path, headers)
    assert target.host == host
    if host == "api.openai.com":
        assert target.path.startswith("/v1/") and not target.path.startswith("/v1/v1/")


def test_an_upstream_given_takes_every_request_with_its_path_as_sent():
    routes = Upstreams.of("http://10.0.0.2:8080/base/")
    for path in ("/v1/messages", "/responses", "/v1/chat/completions?x=1"):
        assert str(routes.target(path)) == f"http://10.0.0.2:8080/base{path}"
    assert routes.describe() == "http://10.0.0.2:8080/base"


def test_an_upstream_ending_in_v1_and_a_path_starting_with_it_meet_once():
    """``--upstream https://host/openai/v1`` with the OpenAI SDK's base URL (``…/v1``): before,
    the request went to ``…/v1/v1/responses``."""
    routes = Upstreams.of("https://gw.example/openai/v1/")
    assert str(routes.target("/v1/responses?x=1")) == "https://gw.example/openai/v1/responses?x=1"
    assert str(routes.target("/responses")) == "https://gw.example/openai/v1/responses"
    assert str(routes.target("/v1")) == "https://gw.example/openai/v1"
    assert str(routes.target("/v1beta/models")) == "https://gw.example/openai/v1/v1beta/models"
    mine = Upstreams.of(None, "http://127.0.0.1:9000/v1")  # $ANTHROPIC_BASE_URL with a /v1
    assert str(mine.target("/v1/messages")) == "http://127.0.0.1:9000/v1/messages"


def test_a_gateway_error_speaks_the_client_api():
    openai_error = json.loads(error_body(True, "upstream unreachable"))
    assert openai_error["error"]["message"] == "upstream unreachable"
    assert set(openai_error["error"]) == {"message", "type", "param", "code"}
    anthropic_error = json.loads(error_body(False, "upstream unreachable"))
    assert anthropic_error == {"type": "error", "error": {"type": "api_error",
                                                          "message": "upstream unreachable"}}
    refused = json.loads(error_body(True, "no", "invalid_request_error", "upgrade_required"))
    assert (refused["error"]["type"], refused["error"]["code"]) == (
        "invalid_request_error", "upgrade_required")


def test_a_query_given_with_the_upstream_goes_on_every_request_before_the_clients():
    """Azure's OpenAI endpoint wants ``?api-version=…`` on every call; before, a query in
    ``--upstream`` was dropped (though the watch's start line showed it)."""
    azure = Upstreams.of("https://res.openai.azure.com/openai/v1?api-version=preview")
    assert str(azure.target("/v1/responses")) == \
        "https://res.openai.azure.com/openai/v1/responses?api-version=preview"
    assert str(azure.target("/v1/responses?stream=1")) == \
        "https://res.openai.azure.com/openai/v1/responses?api-version=preview&stream=1"
    assert str(Upstreams.of("http://h:1/x").target("/v1/messages?a=%20b")) == \
        "http://h:1/x/v1/messages?a=%20b"  # the client's query as sent
