// The messages, enums and client types of platform.compute.v1, as the SDK's `computeV1` namespace.
export * from "../../../gen/platform/compute/v1/app_pb.js";
export * from "../../../gen/platform/compute/v1/build_pb.js";
export * from "../../../gen/platform/compute/v1/build_service_client.js";
export * from "../../../gen/platform/compute/v1/build_service_pb.js";
export * from "../../../gen/platform/compute/v1/compute_service_client.js";
export * from "../../../gen/platform/compute/v1/compute_service_pb.js";
export * from "../../../gen/platform/compute/v1/secret_service_client.js";
export * from "../../../gen/platform/compute/v1/secret_service_pb.js";
