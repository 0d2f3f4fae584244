// The Anthropic Node SDK in a tool loop against ANTHROPIC_BASE_URL: one session with messages.create, one
// with messages.stream().finalMessage(). Prints what the agent saw, as JSON, on stdout.
const sdk = require("@anthropic-ai/sdk");
const Anthropic = sdk.default ?? sdk;
const WEATHER = { 北京: "晴", 上海: "多云" };
const TOOLS = [{ name: "get_weather", description: "The weather of a city.",
                 input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }];

async function session(client, question, stream) {
  const messages = [{ role: "user", content: question }];
  const seen = [];
  for (let turn = 0; turn < 5; turn++) {
    const params = { model: "claude-test", max_tokens: 512, tools: TOOLS, messages };
    const reply = stream ? await client.messages.stream(params).finalMessage() : await client.messages.create(params);
    seen.push(reply.content);
    messages.push({ role: "assistant", content: reply.content });
    const calls = reply.content.filter((block) => block.type === "tool_use");
    if (calls.length === 0) return seen;
    messages.push({ role: "user", content: calls.map((call) => (
      { type: "tool_result", tool_use_id: call.id, content: WEATHER[call.input.city] ?? "未知" })) });
  }
  return seen;
}

(async () => {
  const client = new Anthropic({ maxRetries: 0 });
  const out = [await session(client, "北京天气怎么样？", false), await session(client, "上海天气怎么样？", true)];
  process.stdout.write(JSON.stringify(out) + "\n");
})().catch((error) => { console.error(error); process.exit(1); });
