// The messages, enums and client types of platform.iam.v1, as the SDK's `iamV1` namespace.
export * from "../../../gen/platform/iam/v1/iam_pb.js";
export * from "../../../gen/platform/iam/v1/iam_service_client.js";
export * from "../../../gen/platform/iam/v1/iam_service_pb.js";
