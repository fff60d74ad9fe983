/** The project's settings file. Its own module: the CLI finds a project by it without loading the config schemas. */
export const CONFIG_FILE = "config.yaml";
