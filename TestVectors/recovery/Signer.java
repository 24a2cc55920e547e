// Signs the Assertion or the Response of a SAML response read from stdin with the JDK's own XML-DSig
// (javax.xml.crypto.dsig, Santuario inside the JDK), as a Java IdP would; writes the document to stdout.
// Usage: java Signer KEY.pem CERT.pem Assertion|Response SIGALG-URI DIGEST-URI (RSA or EC PKCS#8 key). Test data generation only (generate.py).
import java.io.ByteArrayInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.List;
import javax.xml.crypto.dsig.CanonicalizationMethod;
import javax.xml.crypto.dsig.DigestMethod;
import javax.xml.crypto.dsig.Reference;
import javax.xml.crypto.dsig.SignatureMethod;
import javax.xml.crypto.dsig.SignedInfo;
import javax.xml.crypto.dsig.Transform;
import javax.xml.crypto.dsig.XMLSignatureFactory;
import javax.xml.crypto.dsig.dom.DOMSignContext;
import javax.xml.crypto.dsig.keyinfo.KeyInfoFactory;
import javax.xml.crypto.dsig.spec.C14NMethodParameterSpec;
import javax.xml.crypto.dsig.spec.TransformParameterSpec;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.transform.TransformerFactory;
import javax.xml.transform.dom.DOMSource;
import javax.xml.transform.stream.StreamResult;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

public class Signer {
    static final String SAML = "urn:oasis:names:tc:SAML:2.0:assertion";
    static final String SAMLP = "urn:oasis:names:tc:SAML:2.0:protocol";

    public static void main(String[] args) throws Exception {
        String pem = Files.readString(Path.of(args[0])).replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
        byte[] der = Base64.getDecoder().decode(pem);
        PrivateKey key;
        try { key = KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(der)); }
        catch (Exception e) { key = KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(der)); }
        X509Certificate cert = (X509Certificate) CertificateFactory.getInstance("X.509")
                .generateCertificate(new ByteArrayInputStream(Files.readAllBytes(Path.of(args[1]))));
        DocumentBuilderFactory dbf = DocumentBuilderFactory.newInstance();
        dbf.setNamespaceAware(true);
        Document doc = dbf.newDocumentBuilder().parse(System.in);
        Element element = args[2].equals("Response") ? doc.getDocumentElement()
                : (Element) doc.getElementsByTagNameNS(SAML, "Assertion").item(0);
        element.setIdAttributeNS(null, "ID", true);
        Node issuer = element.getElementsByTagNameNS(SAML, "Issuer").item(0);

        XMLSignatureFactory factory = XMLSignatureFactory.getInstance("DOM");
        List<Transform> transforms = List.of(
                factory.newTransform(Transform.ENVELOPED, (TransformParameterSpec) null),
                factory.newTransform(CanonicalizationMethod.EXCLUSIVE, (TransformParameterSpec) null));
        Reference reference = factory.newReference("#" + element.getAttribute("ID"),
                factory.newDigestMethod(args[4], null), transforms, null, null);
        SignedInfo signedInfo = factory.newSignedInfo(
                factory.newCanonicalizationMethod(CanonicalizationMethod.EXCLUSIVE, (C14NMethodParameterSpec) null),
                factory.newSignatureMethod(args[3], null), List.of(reference));
        KeyInfoFactory keys = factory.getKeyInfoFactory();
        var keyInfo = keys.newKeyInfo(List.of(keys.newX509Data(List.of(cert))));
        DOMSignContext context = new DOMSignContext(key, element, issuer.getNextSibling());
        context.setDefaultNamespacePrefix("ds");
        factory.newXMLSignature(signedInfo, keyInfo).sign(context);
        TransformerFactory.newInstance().newTransformer().transform(new DOMSource(doc), new StreamResult(System.out));
    }
}
