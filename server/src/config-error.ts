/** A setting that cannot be used: the message names the flag or variable and what it expects. */
export class ConfigError extends Error {
  override name = "ConfigError";
}
