// A stand-alone round-robin assignor speaking kverify's JSON-lines wire format (issue 3):
// one problem per line on stdin, one answer per line on stdout. Used by tests/test_certify_external.py
// to certify a program written in another language with `kverify assignor check --command`.
// Plain JDK only: a tiny JSON reader/writer is included.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.*;

public class RoundRobinAssignor {
    private final String s;
    private int i;

    private RoundRobinAssignor(String s) { this.s = s; }

    private void ws() { while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++; }

    private Object value() {
        ws();
        char c = s.charAt(i);
        if (c == '{') {
            Map<String, Object> m = new LinkedHashMap<>();
            i++; ws();
            if (s.charAt(i) == '}') { i++; return m; }
            while (true) {
                ws(); String k = (String) value(); ws(); i++; // ':'
                m.put(k, value()); ws();
                if (s.charAt(i++) == '}') return m;
            }
        }
        if (c == '[') {
            List<Object> l = new ArrayList<>();
            i++; ws();
            if (s.charAt(i) == ']') { i++; return l; }
            while (true) {
                l.add(value()); ws();
                if (s.charAt(i++) == ']') return l;
            }
        }
        if (c == '"') {
            StringBuilder b = new StringBuilder();
            i++;
            while (s.charAt(i) != '"') {
                char d = s.charAt(i++);
                if (d == '\\') {
                    char e = s.charAt(i++);
                    if (e == 'u') { b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; }
                    else if (e == 'n') b.append('\n');
                    else if (e == 't') b.append('\t');
                    else b.append(e);
                } else b.append(d);
            }
            i++;
            return b.toString();
        }
        if (s.startsWith("null", i)) { i += 4; return null; }
        if (s.startsWith("true", i)) { i += 4; return Boolean.TRUE; }
        if (s.startsWith("false", i)) { i += 5; return Boolean.FALSE; }
        int start = i;
        while (i < s.length() && "-+0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
        return Long.parseLong(s.substring(start, i));
    }

    private static String quote(String x) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : x.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20 || c > 0x7e) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    private static String idJson(Object id) {
        if (id == null) return "null";
        if (id instanceof String) return quote((String) id);
        return id.toString();
    }

    @SuppressWarnings("unchecked")
    static String answer(Map<String, Object> problem) {
        Map<String, Object> topics = (Map<String, Object>) problem.get("topics");
        List<Map<String, Object>> members = (List<Map<String, Object>>) problem.get("members");
        List<Map<String, Object>> sorted = new ArrayList<>(members);
        // Kafka's MemberInfo order: static members first by instance id, then member id (String.compareTo)
        sorted.sort((a, b) -> {
            String ia = (String) a.get("instance_id"), ib = (String) b.get("instance_id");
            if (ia != null && ib != null) return ia.compareTo(ib);
            if (ia != null) return -1;
            if (ib != null) return 1;
            return ((String) a.get("id")).compareTo((String) b.get("id"));
        });
        TreeSet<String> subscribed = new TreeSet<>();
        for (Map<String, Object> m : members) subscribed.addAll((List<String>) m.get("topics"));
        Map<String, List<String>> out = new LinkedHashMap<>();
        for (Map<String, Object> m : members) out.put((String) m.get("id"), new ArrayList<>());
        int pos = 0;
        for (String t : subscribed) {
            Object n = topics.get(t);
            if (n == null) continue;
            for (long p = 0; p < (Long) n; p++) {
                while (!((List<String>) sorted.get(pos).get("topics")).contains(t)) pos = (pos + 1) % sorted.size();
                out.get((String) sorted.get(pos).get("id")).add("[" + quote(t) + "," + p + "]");
                pos = (pos + 1) % sorted.size();
            }
        }
        StringBuilder b = new StringBuilder("{\"id\":" + idJson(problem.get("id")) + ",\"assignment\":{");
        boolean first = true;
        for (Map.Entry<String, List<String>> e : out.entrySet()) {
            if (!first) b.append(',');
            first = false;
            b.append(quote(e.getKey())).append(":[").append(String.join(",", e.getValue())).append(']');
        }
        return b.append("}}").toString();
    }

    @SuppressWarnings("unchecked")
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, true, "UTF-8");
        String line;
        while ((line = in.readLine()) != null) {
            if (line.trim().isEmpty()) continue;
            out.println(answer((Map<String, Object>) new RoundRobinAssignor(line).value()));
        }
    }
}
