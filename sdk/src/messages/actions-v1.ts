// The messages, enums and client types of platform.data.actions.v1, as the SDK's `actionsV1` namespace.
export * from "../../../gen/platform/data/actions/v1/action_pb.js";
export * from "../../../gen/platform/data/actions/v1/action_run_pb.js";
export * from "../../../gen/platform/data/actions/v1/actions_service_client.js";
export * from "../../../gen/platform/data/actions/v1/actions_service_pb.js";
export * from "../../../gen/platform/data/actions/v1/selection_pb.js";
