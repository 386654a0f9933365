import java.util.*;

// Records Java's String.hashCode and HashMap/HashSet iteration orders as JSON (run once, output kept).
public class JavaOrderRecord {
    static String q(Object o) {
        if (o instanceof Integer) return o.toString();
        StringBuilder b = new StringBuilder("\"");
        for (char c : ((String) o).toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20 || c > 0x7e) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }
    static String list(Collection<?> xs) {
        StringJoiner j = new StringJoiner(", ", "[", "]");
        for (Object x : xs) j.add(q(x));
        return j.toString();
    }
    static List<String> out = new ArrayList<>();
    static void map(String hash, Integer initial, List<Object[]> ops) {
        Map<Object, Boolean> m = initial == null ? new HashMap<>() : new HashMap<>(initial);
        StringJoiner o = new StringJoiner(", ", "[", "]");
        for (Object[] op : ops) {
            String kind = (String) op[0];
            if (kind.equals("put")) m.put(op[1], true);
            else if (kind.equals("remove")) m.remove(op[1]);
            else m.computeIfAbsent(op[1], k -> true);
            o.add("[\"" + kind + "\", " + q(op[1]) + "]");
        }
        out.add("{\"kind\": \"hashmap\", \"hash\": \"" + hash + "\", \"initial\": " + initial + ", \"ops\": " + o
                + ", \"order\": " + list(m.keySet()) + "}");
    }
    static void copy(List<Integer> items) {
        out.add("{\"kind\": \"hashset-copy\", \"hash\": \"integer\", \"items\": " + list(items)
                + ", \"order\": " + list(new HashSet<>(items)) + "}");
    }
    public static void main(String[] a) {
        Random r = new Random(1729);
        String alpha = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";
        List<String> strs = new ArrayList<>(List.of("", "a", "hello", "polygenelubricants", "consumer",
            "\u00fcber", "\u65e5\u672c\u8a9e", "\ud83d\ude00x", "x\ud83c\udf89\ud83c\udf89", "\uffff\u0100\u00ff"));
        for (int i = 0; i < 20; i++) {
            StringBuilder b = new StringBuilder("consumer-" + i + "-");
            for (int k = 0; k < 22; k++) b.append(alpha.charAt(r.nextInt(alpha.length())));
            strs.add(b.toString());
        }
        StringJoiner h = new StringJoiner(", ", "[", "]");
        for (String s : strs) h.add("[" + q(s) + ", " + s.hashCode() + "]");
        out.add("{\"kind\": \"string-hash\", \"values\": " + h + "}");
        for (int n : new int[]{5, 13, 30}) {
            List<Object[]> ops = new ArrayList<>();
            for (int i = 0; i < n; i++) ops.add(new Object[]{"put", strs.get(10 + (i * 7) % 20) + (i >= 20 ? "~" + i : "")});
            if (n == 13) { ops.add(new Object[]{"remove", ops.get(2)[1]}); ops.add(new Object[]{"put", ops.get(2)[1]}); }
            map("string", null, ops);
        }
        List<Object[]> ops = new ArrayList<>();
        for (int i : new int[]{5, 1, 9, 3, 17, 33}) ops.add(new Object[]{"put", i});
        ops.add(new Object[]{"remove", 1}); ops.add(new Object[]{"put", 1});
        map("integer", 0, ops);
        ops = new ArrayList<>();
        for (int i : new int[]{64, 2, 2, 34, 66, 7, 130, 5}) ops.add(new Object[]{"cia", i});
        map("integer", 0, ops);
        ops = new ArrayList<>();
        for (int i = 0; i < 10; i++) ops.add(new Object[]{"put", (i * 37) % 101});
        map("integer", (int) ((10 / 0.75f) + 1), ops);
        for (int n : new int[]{6, 13, 30}) {
            List<Integer> items = new ArrayList<>();
            for (int i = 0; i < n; i++) items.add(i * 17 % 97 + 16 * (i % 3));
            copy(items);
        }
        System.out.println("[\n" + String.join(",\n", out) + "\n]");
    }
}
