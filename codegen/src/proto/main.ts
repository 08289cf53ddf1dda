// Entry point of protoc-gen-platform, run by `buf generate` (see buf.gen.yaml).
import { runNodeJs } from "@bufbuild/protoplugin";
import { platformPlugin } from "./plugin.js";

runNodeJs(platformPlugin);
