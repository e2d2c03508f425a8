# The official `openai` Python client, unmodified, against the gateway (issue 18: "The official
# openai npm and Python clients work unmodified"). Run by model-gateway.test.ts with BASE_URL
# ({run_url}/{ws}/models/{model}) and KEY (a workspace API key); prints one line per check.
import os

from openai import AuthenticationError, OpenAI

client = OpenAI(base_url=os.environ["BASE_URL"], api_key=os.environ["KEY"])
ask = [{"role": "user", "content": "Say hello"}]

r = client.chat.completions.create(model="x", messages=ask)
print("plain", r.choices[0].message.content, r.usage.prompt_tokens, r.usage.completion_tokens)

text, usage = "", None
for chunk in client.chat.completions.create(
    model="x", messages=ask, stream=True, stream_options={"include_usage": True}
):
    if chunk.choices:
        text += chunk.choices[0].delta.content or ""
    if chunk.usage:
        usage = chunk.usage
print("stream", text, usage.prompt_tokens, usage.completion_tokens)

tool = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
t = client.chat.completions.create(
    model="x", messages=[{"role": "user", "content": "Weather in Paris?"}], tools=[tool]
)
call = t.choices[0].message.tool_calls[0].function
print("tool", call.name, call.arguments)

print("embeddings", len(client.embeddings.create(model="x", input="hello").data[0].embedding))
print("models", ",".join(m.id for m in client.models.list()))

try:
    OpenAI(base_url=os.environ["BASE_URL"], api_key="not-a-key").chat.completions.create(
        model="x", messages=ask
    )
    print("bad-key accepted")
except AuthenticationError as e:
    print("bad-key", e.status_code)
