import ArgumentParser

/// `aspectctl explore`: a campaign (the default subcommand, so `aspectctl explore [<options>]
/// -- <command>` runs one) and the merge of a sharded campaign's reports.
struct Explore: ParsableCommand {
    static let name = "explore"

    static let configuration = CommandConfiguration(
        commandName: name,
        abstract: "Fail every call site of a program in turn and report what it does.",
        discussion: """
        Without a subcommand, explore runs a campaign: `aspectctl explore [<options>] -- <command>` is `aspectctl explore campaign [<options>] -- <command>` (`aspectctl explore campaign --help` lists its options). A campaign split over machines with --shard I/N is made whole by `aspectctl explore merge`.
        """,
        subcommands: [ExploreCampaignCommand.self, ExploreMerge.self],
        defaultSubcommand: ExploreCampaignCommand.self)
}
