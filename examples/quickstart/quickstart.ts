// A first program against a local platform: run the server (`npm start`), create an organization
// (`npx platform-server admin create-org acme`), then:
//
//   PLATFORM_TOKEN=dk_... PLATFORM_ORG=acme npm start -w examples/quickstart
//
import { Code, ConnectError, createPlatformClient } from "@platform/sdk";

const platform = createPlatformClient({
  apiUrl: process.env.PLATFORM_API_URL ?? "http://127.0.0.1:8080",
  token: process.env.PLATFORM_TOKEN,
  organization: process.env.PLATFORM_ORG,
});

const health = await platform.script.healthCheck({});
console.log(`platform ${health.version} is ${health.status}, up ${health.uptimeSeconds} s`);

// Tenant-wide environment variables, loaded into threads that ask for them.
await platform.script.setEnvVar({ key: "REGION", value: "eu-west" });
await platform.script.importEnvVars({ vars: { LOG_LEVEL: "info", FEATURE_X: "on" } });
const { vars } = await platform.script.listEnvVars({});
console.log("environment:", vars.map((v) => `${v.key}=${v.value}`).join(" "));

// A git credential for builds, sealed at rest; listing never returns values.
await platform.secrets.createSecret({
  name: "github",
  value: { value: { case: "gitSecret", value: { username: "ci-bot", token: "ghp_example" } } },
});
const { secrets } = await platform.secrets.listSecrets({});
console.log("secrets:", secrets.map((s) => `${s.name} (${s.type})`).join(", "));

// Errors are typed: a code, a message naming what went wrong, and details.
try {
  await platform.script.getEnvVar({ key: "MISSING" });
} catch (error) {
  const e = ConnectError.from(error);
  console.log(`GetEnvVar MISSING: ${Code[e.code]}: ${e.rawMessage}`);
}
