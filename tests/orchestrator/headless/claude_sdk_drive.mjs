// Drives `reasonix` through the npm Claude Agent SDK: argv[2] is the SDK's directory (node_modules), argv[3] a JSON
// {cli, cwd, env, prompts}; prints every message the SDK yields as one JSON line.
const [sdkDir, configText] = process.argv.slice(2);
const { query } = await import(`${sdkDir}/@anthropic-ai/claude-agent-sdk/sdk.mjs`);
const config = JSON.parse(configText);
async function* prompts() {
  for (const text of config.prompts) {
    yield { type: "user", message: { role: "user", content: text }, parent_tool_use_id: null, session_id: "" };
    await new Promise((resolve) => (next = resolve));
  }
}
let next = () => {};
const denied = [];
const run = query({
  prompt: prompts(),
  options: {
    pathToClaudeCodeExecutable: config.cli,
    cwd: config.cwd,
    env: config.env,
    canUseTool: async (name, input, { toolUseID }) => {
      if (name === "bash") {
        denied.push(toolUseID);
        return { behavior: "deny", message: "no commands from node" };
      }
      return { behavior: "allow", updatedInput: input };
    },
  },
});
for await (const message of run) {
  console.log(JSON.stringify(message));
  if (message.type === "result") next();
}
console.log(JSON.stringify({ type: "done", denied }));
