// Drives `reasonix` through the npm Claude Agent SDK: argv[2] is the SDK's directory (node_modules), argv[3] a JSON
// {cli, cwd, env, prompts, hooks}; prints every message the SDK yields as one JSON line. With `hooks`, a PreToolUse
// hook on Bash denies with the reason `hooks` gives (no canUseTool then) and a PostToolUse hook notes what it saw.
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
const hooked = [];
const options = {
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
};
if (config.hooks) {
  delete options.canUseTool;
  const deny = async (input, toolUseID) => {
    hooked.push({ event: input.hook_event_name, tool: input.tool_name, toolUseID });
    return {
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: config.hooks },
    };
  };
  const saw = async (input, toolUseID) => {
    hooked.push({ event: input.hook_event_name, tool: input.tool_name, toolUseID, response: input.tool_response });
    return {};
  };
  options.hooks = { PreToolUse: [{ matcher: "Bash", hooks: [deny] }], PostToolUse: [{ hooks: [saw] }] };
}
const run = query({ prompt: prompts(), options });
for await (const message of run) {
  console.log(JSON.stringify(message));
  if (message.type === "result") next();
}
console.log(JSON.stringify({ type: "done", denied, hooked }));
