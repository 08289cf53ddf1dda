import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

/** Debian's Chromium, or the one CHROMIUM_PATH names. */
export const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Headless Chromium for the browser tests, with nothing of its own going out to the network. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(chromiumPath)) {
    throw new Error(
      `no Chromium at ${chromiumPath}: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH`,
    );
  }
  return chromium.launch({
    executablePath: chromiumPath,
    // A page whose origin is a public name the test serves itself while the server listens on
    // loopback: Chromium's Local Network Access would ask the user before such a page reaches a
    // local address, which nobody can answer headless. CORS is still fully enforced.
    args: [
      "--disable-features=LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
