// The JDK's own XML-DSig (javax.xml.crypto.dsig, JDK only) on the same input and protocol as `saml bench`:
// Base64 text in -> decode -> namespace-aware DOM parse (secure processing, no DOCTYPE) -> register the
// SAML ID attributes -> validate every ds:Signature against the pinned public key (secure validation
// on) -> read NameID and every attribute value. Like the C baseline it checks nothing else.
//
// Protocol: the input must verify, a copy with one attribute value changed must not, then JIT warm-up,
// then timed runs on one thread. Prints one JSON line. With --interleave it prints {"ready": true} after
// the warm-up and then times one slice of --seconds per line read from standard input, one JSON line
// each, until standard input closes: `saml bench --jdk` alternates these slices with its own on the same
// core, so that both sides see the same machine. By hand:
//   javac -d /tmp/jdkbench Benchmarks/JDK/JDKVerifyBench.java
//   java -cp /tmp/jdkbench JDKVerifyBench --cert CERT.pem --seconds 3 --warm-up 20 BASE64-FILE
// On one core (taskset) C2 needs about 20 s to settle: with 5 s the figures wander from 1,200 to 2,700/s.
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PublicKey;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import javax.xml.XMLConstants;
import javax.xml.crypto.KeySelector;
import javax.xml.crypto.dsig.XMLSignature;
import javax.xml.crypto.dsig.XMLSignatureFactory;
import javax.xml.crypto.dsig.dom.DOMValidateContext;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

public final class JDKVerifyBench {
    static final String DSIG = "http://www.w3.org/2000/09/xmldsig#";
    static final String SAML = "urn:oasis:names:tc:SAML:2.0:assertion";
    static final String SAMLP = "urn:oasis:names:tc:SAML:2.0:protocol";

    private final PublicKey key;
    private final DocumentBuilder builder;
    private final XMLSignatureFactory factory = XMLSignatureFactory.getInstance("DOM");

    JDKVerifyBench(PublicKey key) throws Exception {
        this.key = key;
        DocumentBuilderFactory dbf = DocumentBuilderFactory.newInstance();
        dbf.setNamespaceAware(true);
        dbf.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
        dbf.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        dbf.setExpandEntityReferences(false);
        builder = dbf.newDocumentBuilder();
    }

    /** The full path on one input; returns the number of values read (so the JIT cannot drop the work). */
    int run(byte[] transported) throws Exception {
        byte[] xml = Base64.getMimeDecoder().decode(transported);
        Document document = builder.parse(new ByteArrayInputStream(xml));
        registerIDs(document.getDocumentElement());
        NodeList signatures = document.getElementsByTagNameNS(DSIG, "Signature");
        if (signatures.getLength() == 0) throw new IllegalStateException("no signature");
        for (int i = 0; i < signatures.getLength(); i++) {
            DOMValidateContext context = new DOMValidateContext(KeySelector.singletonKeySelector(key), signatures.item(i));
            context.setProperty("org.jcp.xml.dsig.secureValidation", Boolean.TRUE);
            XMLSignature signature = factory.unmarshalXMLSignature(context);
            if (!signature.validate(context)) throw new IllegalStateException("signature invalid");
        }
        int values = 0;
        NodeList names = document.getElementsByTagNameNS(SAML, "NameID");
        for (int i = 0; i < names.getLength(); i++) values += names.item(i).getTextContent().length();
        NodeList attributeValues = document.getElementsByTagNameNS(SAML, "AttributeValue");
        for (int i = 0; i < attributeValues.getLength(); i++) values += attributeValues.item(i).getTextContent().length();
        return values;
    }

    static void registerIDs(Element element) {
        String ns = element.getNamespaceURI();
        if ((SAML.equals(ns) || SAMLP.equals(ns)) && element.hasAttribute("ID")) element.setIdAttribute("ID", true);
        for (org.w3c.dom.Node child = element.getFirstChild(); child != null; child = child.getNextSibling()) {
            if (child instanceof Element) registerIDs((Element) child);
        }
    }

    public static void main(String[] args) throws Exception {
        String certificate = null;
        double seconds = 2, warmUp = 5;
        boolean interleave = false;
        List<String> files = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--cert": certificate = args[++i]; break;
                case "--seconds": seconds = Double.parseDouble(args[++i]); break;
                case "--warm-up": warmUp = Double.parseDouble(args[++i]); break;
                case "--interleave": interleave = true; break;
                default: files.add(args[i]);
            }
        }
        if (certificate == null || files.size() != 1) {
            System.err.println("usage: JDKVerifyBench --cert CERT.pem [--seconds S] [--warm-up S] [--interleave] BASE64-FILE");
            System.exit(2);
        }
        X509Certificate x509 = (X509Certificate) CertificateFactory.getInstance("X.509")
            .generateCertificate(Files.newInputStream(Path.of(certificate)));
        JDKVerifyBench bench = new JDKVerifyBench(x509.getPublicKey());
        byte[] input = Files.readAllBytes(Path.of(files.get(0)));

        // The protocol: good verifies, tampered fails.
        bench.run(input);
        String xml = new String(Base64.getMimeDecoder().decode(input), StandardCharsets.UTF_8);
        int at = xml.indexOf("AttributeValue");
        int value = xml.indexOf('>', at) + 1;
        String tampered = xml.substring(0, value) + (xml.charAt(value) == 'x' ? 'y' : 'x') + xml.substring(value + 1);
        boolean refused = false;
        try {
            bench.run(Base64.getEncoder().encode(tampered.getBytes(StandardCharsets.UTF_8)));
        } catch (Exception expected) {
            refused = true;
        }
        if (!refused) throw new IllegalStateException("a tampered copy verified");

        long warmEnd = System.nanoTime() + (long) (warmUp * 1e9);
        while (System.nanoTime() < warmEnd) bench.run(input);
        if (!interleave) {
            slice(bench, input, seconds);
            return;
        }
        System.out.println("{\"ready\": true}");
        System.out.flush();
        BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        while (commands.readLine() != null) {
            slice(bench, input, seconds);
        }
    }

    // Verifies for `seconds` and prints one JSON line (with a value derived from the results, so that
    // they are used).
    static void slice(JDKVerifyBench bench, byte[] input, double seconds) throws Exception {
        long sink = 0;
        long start = System.nanoTime(), end = start + (long) (seconds * 1e9), count = 0, now;
        do {
            sink += bench.run(input);
            count++;
            now = System.nanoTime();
        } while (now < end);
        double elapsed = (now - start) / 1e9;
        System.out.printf("{\"responses_per_second\": %.1f, \"microseconds_per_response\": %.2f, \"sink\": %d}%n",
            count / elapsed, elapsed * 1e6 / count, sink % 10);
        System.out.flush();
    }
}
