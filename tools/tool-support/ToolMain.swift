import ArgumentParser

/// Runs a tool's root command on `arguments` (the process's own when nil): what each
/// tool's main and the multi-call `bareble` call. Generic so that the async `main` is the
/// one chosen: top-level code and an existential metatype pick the synchronous one, which
/// cannot run an async command.
public func runTool<Command: AsyncParsableCommand>(_ command: Command.Type, arguments: [String]? = nil) async {
    await command.main(arguments)
}
