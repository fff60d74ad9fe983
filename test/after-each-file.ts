/** vitest setup file (every project): runs what the helpers registered for this test file once the file ends. */
import { afterAll } from "vitest";
import { runFileCleanups } from "../packages/daemon/test/helpers/file-cleanups.js";

afterAll(runFileCleanups);
