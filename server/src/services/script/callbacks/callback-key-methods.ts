import { create } from "@bufbuild/protobuf";
import {
  CallbackSigningKeySchema,
  type CallbackSigningKey,
} from "../../../../../gen/platform/script/v1/script_service_pb.js";
import type { ScriptServiceImplementation } from "../../../../../gen/platform/script/v1/script_service_server.js";
import { principalOf } from "../../../auth/principal.js";
import { formatSigningKey, type CallbackSigningKeys, type SigningKeys } from "./callback-signing-keys.js";

/** GetCallbackSigningKey and RotateCallbackSigningKey. */
export function createCallbackKeyMethods(
  keys: CallbackSigningKeys,
): Pick<ScriptServiceImplementation, "getCallbackSigningKey" | "rotateCallbackSigningKey"> {
  return {
    async getCallbackSigningKey(_request, context) {
      return toMessage(await keys.get(principalOf(context).orgId));
    },
    async rotateCallbackSigningKey(_request, context) {
      return toMessage(await keys.rotate(principalOf(context).orgId));
    },
  };
}

function toMessage(keys: SigningKeys): CallbackSigningKey {
  return create(CallbackSigningKeySchema, {
    key: formatSigningKey(keys.current),
    createdAtMs: BigInt(keys.createdAt),
    previousKeyExpiresAtMs: BigInt(keys.previousExpiresAt),
  });
}
