import Testing
import AspectsRules

@Suite(.tags(.fast)) struct PrototypeParserTests {
    let parser = PrototypeParser()

    @Test func parsesLibcDeclarations() throws {
        let w = try parser.parse("ssize_t write(int fd, const void *buf, size_t count)")
        #expect(w.name == "write")
        #expect(w.returnType == .i64)
        #expect(w.parameters.map(\.type) == [.i32, .pointer, .u64])
        #expect(w.parameters.map(\.name) == ["fd", "buf", "count"])

        let o = try parser.parse("int open(const char *pathname, int flags, ... /* mode_t mode */);")
        #expect(o.isVariadic)
        #expect(o.parameters.map(\.type) == [.string, .i32])

        let g = try parser.parse("int getaddrinfo(const char *restrict node, const char *restrict service, const struct addrinfo *restrict hints, struct addrinfo **restrict res)")
        #expect(g.parameters.map(\.type) == [.string, .string, .pointer, .pointer])
    }

    @Test func parsesIntegerSpellings() throws {
        let s = try parser.parse("unsigned long long f(unsigned char a, short b, unsigned c, long int d, signed char e, uint16_t g, _Bool h)")
        #expect(s.returnType == .u64)
        #expect(s.parameters.map(\.type) == [.u8, .i16, .u32, .i64, .i8, .u16, .u8])
    }

    @Test func parsesPointersArraysAndFunctionPointers() throws {
        let s = try parser.parse("int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg)")
        #expect(s.parameters.map(\.type) == [.pointer, .pointer, .pointer, .pointer])
        let e = try parser.parse("int execve(const char *path, char *const argv[], char *const envp[])")
        #expect(e.parameters.map(\.type) == [.string, .pointer, .pointer])
        let q = try parser.parse("int sqlite3_step(sqlite3_stmt *)")
        #expect(q.parameters.map(\.type) == [.pointer])
        #expect(q.parameters[0].name == nil)
    }

    @Test func voidParameterListsAndFloats() throws {
        #expect(try parser.parse("pid_t getppid(void)").parameters.isEmpty)
        #expect(try parser.parse("double scale(float x, double y)").parameters.map(\.type) == [.f32, .f64])
    }

    @Test func errorsCarryAColumn() {
        #expect(throws: PrototypeParser.Failure.self) { try parser.parse("int f(struct pair p)") }
        do {
            _ = try parser.parse("int f(widget_t w)")
            Issue.record("expected an error")
        } catch {
            #expect(error.column == 7)
            #expect(error.message.contains("widget_t"))
        }
        do {
            _ = try parser.parse("int f(int a,, int b)")
        } catch {
            #expect(error.column == 13)
        }
    }
}

/// Inputs the fuzzing campaign found (Fuzz/regressions): a digit or letter with a combining
/// mark is one Swift Character that isNumber/isLetter but no C token; the tokenizer once
/// looped on it for ever (prototype "st( 2\u{34D}nx_", and a catalog line "int 77…7\u{59E}").
@Suite(.tags(.fast)) struct PrototypeParserRegressionTests {
    @Test func nonASCIICharactersAreRefusedNotLoopedOn() {
        for text in ["st( 2\u{34D}nx_", "int f\u{301}(int a)", "int f(int 7777777777\u{59E})"] {
            #expect(throws: PrototypeParser.Failure.self) { try PrototypeParser().parse(text) }
        }
        #expect((try? PrototypeParser().parse("int f(int a)"))?.name == "f")
    }
}
