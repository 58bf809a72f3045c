import ArgumentParser
import Glibc

/// Runs a tool's root command on `arguments` (the process's own when nil): what each
/// tool's main and the multi-call `bareble` call. Generic so that the async `main` is the
/// one chosen: top-level code and an existential metatype pick the synchronous one, which
/// cannot run an async command.
///
/// SIGPIPE is ignored: a pipe whose reader went away is an EPIPE error where it is written,
/// so a tool whose stdout closed (`| head`) stops scanning or advertising before it exits
/// (``StopRequest``) instead of dying with the controller still at it.
public func runTool<Command: AsyncParsableCommand>(_ command: Command.Type, arguments: [String]? = nil) async {
    signal(SIGPIPE, SIG_IGN)
    await command.main(arguments)
}
