// The configuration library before it was split into layers: it re-exports them so that code
// written against `import AspectConfig` keeps building. It goes away in the next release;
// import the layer you use (AspectsCore, AspectsRules, AspectsTable, AspectsPreflight,
// AspectsExplore) instead.
@_exported import AspectsCore
@_exported import AspectsExplore
@_exported import AspectsPreflight
@_exported import AspectsRules
@_exported import AspectsTable
