import ArgumentParser
import AspectsCore
import Foundation

/// `--json`, on every command that prints data.
struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print JSON instead of text.")
    var json = false
}

func printJSON(_ value: JSONNode.Value, pretty: Bool = true) { print(value.rendered(pretty: pretty)) }
